//! Open-file limits: every connection is a file descriptor, so a run may need more than the default soft limit.

use nix::sys::resource::{getrlimit, setrlimit, Resource};
use thiserror::Error;

/// Descriptors kept free for everything that is not a connection (poll instances, stdio, files).
const SPARE: u64 = 64;

/// The run needs more descriptors than the hard limit allows.
#[derive(Debug, Error)]
#[error(
    "{connections} connections need about {needed} open files, but this process may open at most {hard}: \
     use fewer connections, or raise the hard limit (ulimit -Hn, or nofile in /etc/security/limits.conf)"
)]
pub struct TooManyConnections {
    /// Connections asked for.
    pub connections: u64,
    /// Descriptors needed.
    pub needed: u64,
    /// The hard limit.
    pub hard: u64,
}

/// Raises the soft open-file limit as far as `connections` needs (up to the hard limit).
pub fn ensure(connections: u64) -> Result<(), TooManyConnections> {
    let needed = connections + SPARE;
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return Ok(()); // cannot tell; let connect report any shortage
    };
    if soft >= needed {
        return Ok(());
    }
    if hard < needed {
        return Err(TooManyConnections { connections, needed, hard });
    }
    let _ = setrlimit(Resource::RLIMIT_NOFILE, needed.max(soft), hard);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_connections_always_fit() {
        ensure(10).unwrap();
    }

    #[test]
    fn past_the_hard_limit_is_refused() {
        let err = ensure(u64::MAX / 2).unwrap_err();
        assert!(err.to_string().contains("ulimit -Hn"));
    }
}
