//! Open-file limits: every connection is a file descriptor, so a run may need more than the default soft limit.

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
pub fn ensure_open_files(connections: u64) -> Result<(), TooManyConnections> {
    let needed = connections + SPARE;
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Ok(()); // cannot tell; let connect report any shortage
    }
    if limit.rlim_cur >= needed {
        return Ok(());
    }
    if limit.rlim_max < needed {
        return Err(TooManyConnections { connections, needed, hard: limit.rlim_max });
    }
    limit.rlim_cur = needed.max(limit.rlim_cur);
    // SAFETY: setrlimit reads the struct we own.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_connections_always_fit() {
        ensure_open_files(10).unwrap();
    }

    #[test]
    fn past_the_hard_limit_is_refused() {
        let err = ensure_open_files(u64::MAX / 2).unwrap_err();
        assert!(err.to_string().contains("ulimit -Hn"));
    }
}
