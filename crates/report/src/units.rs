//! How figures are written: durations in milliseconds with microsecond precision (nothing measured is rounded
//! away), sizes in binary units, load levels with their unit (`1 user`, `64 users`, `40 req/s`).

/// A load level with its unit, singular for one: `1 user`, `64 users`, `1 user/s`, `40 req/s`.
pub fn level(value: f64, unit: &str) -> String {
    match unit.strip_prefix("users") {
        Some(rest) if value == 1.0 => format!("1 user{rest}"),
        // A level measured rather than asked (what a client-bound search completed) is not a round number.
        _ => format!("{} {unit}", (value * 10.0).round() / 10.0),
    }
}

/// Microseconds as milliseconds with three decimals: 1234 µs is `1.234`.
pub fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// A byte count in the largest binary unit that keeps it at or above 1.
pub fn bytes(n: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value:.0} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

/// A whole number with thousands separators: 1234567 is `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(ms(1234.0), "1.234");
        assert_eq!(ms(7.0), "0.007");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.50 KiB");
        assert_eq!(bytes(1073741824.0), "1.00 GiB");
        assert_eq!(count(0), "0");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(level(1.0, "users"), "1 user");
        assert_eq!(level(64.0, "users"), "64 users");
        assert_eq!(level(1.0, "users/s"), "1 user/s");
        assert_eq!(level(0.5, "users/s"), "0.5 users/s");
        assert_eq!(level(1.0, "req/s"), "1 req/s");
        assert_eq!(level(40.0, "req/s"), "40 req/s");
    }
}
