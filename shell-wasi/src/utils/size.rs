//! GNU's `-h` sizes, shared by `ls`, `du` and `df`.

/// Powers of 1024, one decimal below 10, always rounded up; a value that
/// rounds up to 1024 moves to the next unit (`1.0G`, not `1024M`).
pub(crate) fn human(bytes: u64) -> String {
    if bytes < 1024 {
        return bytes.to_string();
    }
    let units = ['K', 'M', 'G', 'T', 'P', 'E'];
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    let letter = units.get(unit).copied().unwrap_or('E');
    if value < 10.0 {
        let tenths = (value * 10.0).ceil() / 10.0;
        if tenths >= 10.0 {
            format!("{}{letter}", tenths.ceil())
        } else {
            format!("{tenths:.1}{letter}")
        }
    } else if value.ceil() >= 1024.0 && unit + 1 < units.len() {
        let next = units.get(unit + 1).copied().unwrap_or('E');
        format!("1.0{next}")
    } else {
        format!("{}{letter}", value.ceil())
    }
}

#[cfg(test)]
mod tests {
    use super::human;

    #[test]
    fn sizes_round_up_like_gnu() {
        assert_eq!(human(14), "14");
        assert_eq!(human(1024), "1.0K");
        assert_eq!(human(1536), "1.5K");
        assert_eq!(human(12 * 1024), "12K");
        assert_eq!(human((1 << 30) - (16 << 10)), "1.0G");
    }
}
