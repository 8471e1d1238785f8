//! GNU's `parse_datetime` grammar (`date -d`, `touch -d`) in UTC, the
//! sandbox's only local zone: calendar dates (`2026-03-01`, `3/1/2026`,
//! `Mar 1 2026`, `1 Mar`, `20260301`), times (`10:00`, `5pm`,
//! `10:00:00.5`), zones (`Z`, `UTC`, `EST`, `+02:00`, `-0530`), weekdays
//! (`next monday`), relative items (`+1 day`, `2 weeks ago`, `last
//! month`, `yesterday`) and `@SECONDS`, with GNU's quirks: a signed
//! number right after a time is its zone (`10:00 +3 hours` is 10:00
//! UTC+3, plus one hour), and a weekday next to a date is ignored.

use crate::programs::timefmt;

/// A relative unit, in months or seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Months(i64),
    Days(i64),
    Seconds(i64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    /// A number: value, digit count, whether it had a sign, and the
    /// nanoseconds of a decimal fraction.
    Num {
        value: i64,
        digits: usize,
        signed: bool,
        nanos: Option<u32>,
    },
    Month(u32),
    Day(u32),
    /// 0 for am, 12 for pm.
    Meridian(u32),
    Ago,
    Ordinal(i64),
    Unit(Unit),
    /// `today`, `yesterday`, … as days.
    DayShift(i64),
    /// A zone name: its offset in minutes.
    Zone(i64),
    Dst,
    /// The `T` between an ISO date and time (also military zone T).
    T,
    Char(char),
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const DAYS: [&str; 7] = [
    "sunday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
];
const ZONES: &[(&str, i64)] = &[
    ("gmt", 0),
    ("ut", 0),
    ("utc", 0),
    ("wet", 0),
    ("west", 60),
    ("bst", 60),
    ("art", -180),
    ("brt", -180),
    ("brst", -120),
    ("nst", -210),
    ("ndt", -150),
    ("ast", -240),
    ("adt", -180),
    ("est", -300),
    ("edt", -240),
    ("cst", -360),
    ("cdt", -300),
    ("mst", -420),
    ("mdt", -360),
    ("pst", -480),
    ("pdt", -420),
    ("akst", -540),
    ("akdt", -480),
    ("hst", -600),
    ("hast", -600),
    ("hadt", -540),
    ("sst", -660),
    ("wat", 60),
    ("cet", 60),
    ("cest", 120),
    ("met", 60),
    ("mez", 60),
    ("mest", 120),
    ("mesz", 120),
    ("eet", 120),
    ("eest", 180),
    ("cat", 120),
    ("sast", 120),
    ("eat", 180),
    ("msk", 180),
    ("msd", 240),
    ("ist", 330),
    ("sgt", 480),
    ("kst", 540),
    ("jst", 540),
    ("gst", 600),
    ("nzst", 720),
    ("nzdt", 780),
];
const ORDINALS: &[(&str, i64)] = &[
    ("last", -1),
    ("this", 0),
    ("next", 1),
    ("first", 1),
    ("third", 3),
    ("fourth", 4),
    ("fifth", 5),
    ("sixth", 6),
    ("seventh", 7),
    ("eighth", 8),
    ("ninth", 9),
    ("tenth", 10),
    ("eleventh", 11),
    ("twelfth", 12),
];

fn unit_word(word: &str) -> Option<Unit> {
    Some(match word {
        "year" => Unit::Months(12),
        "month" => Unit::Months(1),
        "fortnight" => Unit::Days(14),
        "week" => Unit::Days(7),
        "day" => Unit::Days(1),
        "hour" => Unit::Seconds(3600),
        "minute" | "min" => Unit::Seconds(60),
        "second" | "sec" => Unit::Seconds(1),
        _ => return None,
    })
}

/// One alphabetic word (dots removed, lowercase), as GNU's tables read it.
fn word_token(raw: &str) -> Option<Tok> {
    let word: String = raw.to_ascii_lowercase();
    match word.as_str() {
        "am" | "a.m." => return Some(Tok::Meridian(0)),
        "pm" | "p.m." => return Some(Tok::Meridian(12)),
        _ => {}
    }
    let word: String = word.chars().filter(|&c| c != '.').collect();
    let w = word.as_str();
    let abbrev = |name: &str| w == name || (w.len() == 3 && name.starts_with(w));
    if let Some(m) = MONTHS.iter().position(|m| abbrev(m)) {
        return Some(Tok::Month(u32::try_from(m).unwrap_or(0) + 1));
    }
    if w == "sept" {
        return Some(Tok::Month(9));
    }
    let day = DAYS.iter().position(|d| abbrev(d)).or(match w {
        "tues" => Some(2),
        "wednes" => Some(3),
        "thur" | "thurs" => Some(4),
        _ => None,
    });
    if let Some(d) = day {
        return Some(Tok::Day(u32::try_from(d).unwrap_or(0)));
    }
    match w {
        "ago" => return Some(Tok::Ago),
        "dst" => return Some(Tok::Dst),
        "tomorrow" => return Some(Tok::DayShift(1)),
        "yesterday" => return Some(Tok::DayShift(-1)),
        "today" | "now" => return Some(Tok::DayShift(0)),
        "t" => return Some(Tok::T),
        _ => {}
    }
    if let Some(&(_, n)) = ORDINALS.iter().find(|(name, _)| *name == w) {
        return Some(Tok::Ordinal(n));
    }
    if let Some(&(_, off)) = ZONES.iter().find(|(name, _)| *name == w) {
        return Some(Tok::Zone(off));
    }
    if let Some(u) = unit_word(w).or_else(|| w.strip_suffix('s').and_then(unit_word)) {
        return Some(Tok::Unit(u));
    }
    // Military zones: A-I = +1..+9, K-M = +10..+12, N-Y = -1..-12, Z = 0.
    if let [c] = w.as_bytes() {
        let off = match c {
            b'a'..=b'i' => i64::from(c - b'a' + 1),
            b'k'..=b'm' => i64::from(c - b'k' + 10),
            b'n'..=b'y' => -i64::from(c - b'n' + 1),
            b'z' => 0,
            _ => return None,
        };
        return Some(Tok::Zone(off * 60));
    }
    None
}

fn lex(text: &str) -> Option<Vec<Tok>> {
    let chars: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '(' {
            // Comments, nested.
            let mut depth = 0;
            while let Some(&c) = chars.get(i) {
                i += 1;
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                if depth == 0 {
                    break;
                }
            }
            continue;
        }
        if c.is_ascii_digit() || c == '+' || c == '-' {
            let mut sign = 0;
            if c == '+' || c == '-' {
                sign = if c == '-' { -1 } else { 1 };
                i += 1;
                while chars.get(i).is_some_and(|c| c.is_whitespace()) {
                    i += 1;
                }
                if !chars.get(i).is_some_and(char::is_ascii_digit) {
                    // A sign before no number is skipped.
                    continue;
                }
            }
            let start = i;
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            let digits: String = chars.get(start..i)?.iter().collect();
            let mut value: i64 = digits.parse().ok()?;
            let mut nanos = None;
            if matches!(chars.get(i), Some('.' | ','))
                && chars.get(i + 1).is_some_and(char::is_ascii_digit)
            {
                i += 1;
                let fstart = i;
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
                let frac: String = chars.get(fstart..i)?.iter().take(9).collect();
                nanos = format!("{frac:0<9}").parse().ok();
            }
            if sign < 0 {
                value = -value;
            }
            toks.push(Tok::Num {
                value,
                digits: digits.len(),
                signed: sign != 0,
                nanos,
            });
            continue;
        }
        if c.is_alphabetic() {
            let start = i;
            while chars.get(i).is_some_and(|c| c.is_alphabetic() || *c == '.') {
                i += 1;
            }
            let word: String = chars.get(start..i)?.iter().collect();
            toks.push(word_token(&word)?);
            continue;
        }
        toks.push(Tok::Char(c));
        i += 1;
    }
    Some(toks)
}

/// What the items set, as GNU's parser state.
#[derive(Default)]
struct State {
    year: Option<(i64, usize)>,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    nanos: u32,
    meridian: Option<u32>,
    zone: Option<i64>,
    day_ordinal: i64,
    day_number: i64,
    rel_months: i64,
    rel_days: i64,
    rel_seconds: i64,
    dates: usize,
    times: usize,
    days: usize,
    zones: usize,
    rels: usize,
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    st: State,
}

impl Parser {
    fn peek(&self, k: usize) -> Option<Tok> {
        self.toks.get(self.pos + k).copied()
    }

    fn unum(&self, k: usize) -> Option<(i64, usize)> {
        match self.peek(k) {
            Some(Tok::Num {
                value,
                digits,
                signed: false,
                nanos: None,
            }) => Some((value, digits)),
            _ => None,
        }
    }

    fn snum(&self, k: usize) -> Option<(i64, usize)> {
        match self.peek(k) {
            Some(Tok::Num {
                value,
                digits,
                signed: true,
                nanos: None,
            }) => Some((value, digits)),
            _ => None,
        }
    }

    fn is_char(&self, k: usize, c: char) -> bool {
        self.peek(k) == Some(Tok::Char(c))
    }

    fn set_date(&mut self, year: Option<(i64, usize)>, month: i64, day: i64) {
        self.st.dates += 1;
        if year.is_some() {
            self.st.year = year;
        }
        self.st.month = month;
        self.st.day = day;
    }

    /// `+HH[:MM]`/`-HHMM` after a time or a zone name: minutes east.
    fn zone_offset(&mut self) -> Option<i64> {
        let (value, digits) = self.snum(0)?;
        self.pos += 1;
        if self.is_char(0, ':') {
            let (mm, _) = self.unum(1)?;
            self.pos += 2;
            if digits > 2 || mm > 59 {
                return None;
            }
            let sign = if value < 0 { -1 } else { 1 };
            let minutes = value * 60 + sign * mm;
            return (minutes.abs() <= 24 * 60).then_some(minutes);
        }
        let n = if digits <= 2 { value * 100 } else { value };
        let (hh, mm) = (n / 100, n % 100);
        (hh.abs() <= 24 && mm.abs() < 60).then_some(hh * 60 + mm)
    }

    fn set_zone(&mut self, minutes: i64) {
        self.st.zone = Some(minutes);
        self.st.zones += 1;
    }

    /// A time item from its hour: `H:MM[:SS[.frac]] [am|pm] [zone]`.
    fn time(&mut self) -> Option<bool> {
        let Some((hour, _)) = self.unum(0) else {
            return Some(false);
        };
        if let Some(Tok::Meridian(m)) = self.peek(1) {
            self.pos += 2;
            self.st.times += 1;
            (self.st.hour, self.st.minute, self.st.second, self.st.nanos) = (hour, 0, 0, 0);
            self.st.meridian = Some(m);
            return Some(true);
        }
        if !self.is_char(1, ':') {
            return Some(false);
        }
        let (minute, _) = self.unum(2)?;
        self.pos += 3;
        let (mut second, mut nanos) = (0, 0);
        if self.is_char(0, ':') {
            match self.peek(1) {
                Some(Tok::Num {
                    value,
                    signed: false,
                    nanos: n,
                    ..
                }) => {
                    second = value;
                    nanos = n.unwrap_or(0);
                    self.pos += 2;
                }
                _ => return None,
            }
        }
        self.st.times += 1;
        (self.st.hour, self.st.minute, self.st.second, self.st.nanos) =
            (hour, minute, second, nanos);
        self.st.meridian = None;
        match self.peek(0) {
            Some(Tok::Meridian(m)) => {
                self.pos += 1;
                self.st.meridian = Some(m);
            }
            Some(Tok::Num { signed: true, .. }) => {
                let z = self.zone_offset()?;
                self.set_zone(z);
            }
            _ => {}
        }
        Some(true)
    }

    /// A relative item starting here, if any: `[N|ordinal] unit [ago]`.
    fn rel(&mut self) -> Option<bool> {
        let (count, len) = match (self.peek(0), self.peek(1)) {
            (
                Some(Tok::Num {
                    value, nanos: None, ..
                }),
                Some(Tok::Unit(_)),
            ) => (value, 1),
            (Some(Tok::Ordinal(n)), Some(Tok::Unit(_))) => (n, 1),
            (Some(Tok::Unit(_)), _) => (1, 0),
            (Some(Tok::DayShift(d)), _) => {
                self.pos += 1;
                self.st.rel_days = self.st.rel_days.checked_add(d)?;
                self.st.rels += 1;
                return Some(true);
            }
            _ => return Some(false),
        };
        let Some(Tok::Unit(unit)) = self.peek(len) else {
            return Some(false);
        };
        self.pos += len + 1;
        let count = if self.peek(0) == Some(Tok::Ago) {
            self.pos += 1;
            -count
        } else {
            count
        };
        match unit {
            Unit::Months(m) => {
                self.st.rel_months = self.st.rel_months.checked_add(count.checked_mul(m)?)?;
            }
            Unit::Days(d) => {
                self.st.rel_days = self.st.rel_days.checked_add(count.checked_mul(d)?)?;
            }
            Unit::Seconds(s) => {
                self.st.rel_seconds = self.st.rel_seconds.checked_add(count.checked_mul(s)?)?;
            }
        }
        self.st.rels += 1;
        Some(true)
    }

    fn item(&mut self) -> Option<()> {
        if self.time()? {
            return Some(());
        }
        if self.rel()? {
            return Some(());
        }
        let tok = self.peek(0)?;
        match tok {
            Tok::Num {
                value,
                digits,
                signed: false,
                nanos: None,
            } => {
                // Dates starting with a number.
                if let (Some((m, _)), Some((d, _))) = (self.snum(1), self.snum(2)) {
                    self.pos += 3;
                    self.set_date(Some((value, digits)), -m, -d);
                    if self.peek(0) == Some(Tok::T) && self.unum(1).is_some() {
                        self.pos += 1;
                        if !self.time()? {
                            return None;
                        }
                    }
                    return Some(());
                }
                if self.is_char(1, '/') {
                    let (b, _) = self.unum(2)?;
                    if self.is_char(3, '/') {
                        let (c, cd) = self.unum(4)?;
                        self.pos += 5;
                        if digits >= 4 {
                            self.set_date(Some((value, digits)), b, c);
                        } else {
                            self.set_date(Some((c, cd)), value, b);
                        }
                    } else {
                        self.pos += 3;
                        self.set_date(None, value, b);
                    }
                    return Some(());
                }
                if let Some(Tok::Month(m)) = self.peek(1) {
                    // `1 Mar [2026]`, `1-Mar-2026`.
                    let year = self.unum(2).or_else(|| self.snum(2).map(|(v, d)| (-v, d)));
                    self.pos += 2;
                    if year.is_some() {
                        self.pos += 1;
                    }
                    self.set_date(year, i64::from(m), value);
                    return Some(());
                }
                if let Some(Tok::Day(d)) = self.peek(1) {
                    self.pos += 2;
                    self.st.days += 1;
                    self.st.day_ordinal = value;
                    self.st.day_number = i64::from(d);
                    return Some(());
                }
                self.pos += 1;
                self.number(value, digits);
                Some(())
            }
            Tok::Month(m) => {
                self.pos += 1;
                let m = i64::from(m);
                if let (Some((d, _)), Some((y, yd))) = (self.snum(0), self.snum(1)) {
                    self.pos += 2;
                    self.set_date(Some((-y, yd)), m, -d);
                } else if let Some((d, _)) = self.unum(0) {
                    self.pos += 1;
                    let year = if self.is_char(0, ',') {
                        let y = self.unum(1)?;
                        self.pos += 2;
                        Some(y)
                    } else {
                        None
                    };
                    self.set_date(year, m, d);
                } else {
                    return None;
                }
                Some(())
            }
            Tok::Day(_) | Tok::Ordinal(_) => {
                let (ordinal, number) = match (tok, self.peek(1)) {
                    (Tok::Ordinal(n), Some(Tok::Day(d))) => {
                        self.pos += 1;
                        (n, d)
                    }
                    (Tok::Day(d), _) => (0, d),
                    _ => return None,
                };
                self.pos += 1;
                if self.is_char(0, ',') {
                    self.pos += 1;
                }
                self.st.days += 1;
                self.st.day_ordinal = ordinal;
                self.st.day_number = i64::from(number);
                Some(())
            }
            Tok::Zone(_) | Tok::T => {
                let off = match tok {
                    Tok::Zone(off) => off,
                    _ => -7 * 60,
                };
                self.pos += 1;
                match self.peek(0) {
                    Some(Tok::Dst) => {
                        self.pos += 1;
                        self.set_zone(off + 60);
                    }
                    Some(Tok::Num { signed: true, .. })
                        if !matches!(self.peek(1), Some(Tok::Unit(_))) =>
                    {
                        let extra = self.zone_offset()?;
                        self.set_zone(off + extra);
                    }
                    _ => self.set_zone(off),
                }
                Some(())
            }
            _ => None,
        }
    }

    /// A bare number: a year after a date, else YYYYMMDD, else HHMM.
    fn number(&mut self, value: i64, digits: usize) {
        let st = &self.st;
        if st.dates > 0
            && st.year.is_none_or(|(_, d)| d == 0)
            && st.rels == 0
            && (st.times > 0 || digits > 2)
        {
            self.st.year = Some((value, digits));
        } else if digits > 4 {
            self.st.dates += 1;
            self.st.day = value % 100;
            self.st.month = value / 100 % 100;
            self.st.year = Some((value / 10_000, digits - 4));
        } else {
            self.st.times += 1;
            let (h, m) = if digits <= 2 {
                (value, 0)
            } else {
                (value / 100, value % 100)
            };
            (self.st.hour, self.st.minute, self.st.second, self.st.nanos) = (h, m, 0, 0);
            self.st.meridian = None;
        }
    }
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let m = u32::try_from(month).unwrap_or(1);
    let next = if m == 12 {
        timefmt::days_from_civil(year + 1, 1, 1)
    } else {
        timefmt::days_from_civil(year, m + 1, 1)
    };
    next - timefmt::days_from_civil(year, m, 1)
}

/// Days since the epoch of a possibly overflowing year/month/day
/// (mktime's normalization: Feb 31 is Mar 3).
fn normalized_days(year: i64, month0: i64, day: i64) -> i64 {
    let y = year + month0.div_euclid(12);
    let m = u32::try_from(month0.rem_euclid(12) + 1).unwrap_or(1);
    timefmt::days_from_civil(y, m, 1) + day - 1
}

/// Seconds and nanoseconds since the epoch that `text` names, given now.
pub(crate) fn parse(text: &str, now_secs: i64, now_nanos: u32) -> Option<(i64, u32)> {
    let trimmed = text.trim();
    if let Some(rest) = trimmed.strip_prefix('@') {
        let toks = lex(rest)?;
        return match toks.as_slice() {
            // GNU's limit: a year that fits a C int.
            [Tok::Num { value, .. }] if value.abs() > 67_768_036_191_676_799 => None,
            [Tok::Num { value, nanos, .. }] => {
                let n = nanos.unwrap_or(0);
                if *value < 0 && n > 0 {
                    Some((value - 1, 1_000_000_000 - n))
                } else {
                    Some((*value, n))
                }
            }
            _ => None,
        };
    }
    let now = timefmt::civil_from_secs(now_secs);
    let mut parser = Parser {
        toks: lex(trimmed)?,
        pos: 0,
        st: State {
            year: None,
            month: i64::from(now.month),
            day: i64::from(now.day),
            hour: i64::from(now.hour),
            minute: i64::from(now.minute),
            second: i64::from(now.second),
            nanos: now_nanos,
            ..State::default()
        },
    };
    while parser.pos < parser.toks.len() {
        parser.item()?;
    }
    let st = parser.st;
    // Beyond what a calendar computes without overflow (GNU's own limit
    // is the range of time_t).
    const MAX_YEARS: i64 = 1 << 32;
    if st.year.is_some_and(|(y, _)| y.abs() > MAX_YEARS)
        || st.rel_months.abs() > MAX_YEARS * 12
        || st.rel_days.abs() > MAX_YEARS * 366
        || st.rel_seconds.abs() > MAX_YEARS * 366 * 86_400
        || st.day_ordinal.abs() > MAX_YEARS
    {
        return None;
    }
    if st.dates > 1 || st.times > 1 || st.days > 1 || st.zones > 1 {
        return None;
    }
    let year = match st.year {
        Some((y, 2)) if y < 69 => y + 2000,
        Some((y, 1 | 2)) => y + 1900,
        Some((y, _)) => y,
        None => now.year,
    };
    if st.dates > 0
        && (!(1..=12).contains(&st.month) || st.day < 1 || st.day > days_in_month(year, st.month))
    {
        return None;
    }
    let (hour, minute, second, nanos) =
        if st.times > 0 || (st.rels > 0 && st.dates == 0 && st.days == 0) {
            let hour = match st.meridian {
                None if (0..=23).contains(&st.hour) => st.hour,
                Some(m) if (1..=12).contains(&st.hour) => st.hour % 12 + i64::from(m),
                _ => return None,
            };
            if !(0..=59).contains(&st.minute) || !(0..=60).contains(&st.second) {
                return None;
            }
            (hour, st.minute, st.second, st.nanos)
        } else {
            (0, 0, 0, 0)
        };
    let mut days = normalized_days(year, st.month - 1, st.day);
    if st.days > 0 && st.dates == 0 {
        let wday = (days + 4).rem_euclid(7);
        let ahead = (st.day_number - wday + 7).rem_euclid(7);
        let behind = i64::from(st.day_ordinal > 0 && wday != st.day_number);
        days += ahead + 7 * (st.day_ordinal - behind);
    }
    if st.rel_months != 0 || st.rel_days != 0 {
        let c = timefmt::civil_from_secs(days * 86_400);
        let month0 = i64::from(c.month) - 1 + st.rel_months;
        days = normalized_days(c.year, month0, i64::from(c.day) + st.rel_days);
    }
    let mut secs = days.checked_mul(86_400)? + hour * 3600 + minute * 60 + second;
    if let Some(zone) = st.zone {
        secs -= zone * 60;
    }
    secs = secs.checked_add(st.rel_seconds)?;
    if secs.abs() > MAX_YEARS * 366 * 86_400 {
        return None;
    }
    Some((secs, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_772_359_200; // 2026-03-01 10:00:00 UTC, a Sunday

    fn at(text: &str) -> Option<i64> {
        parse(text, NOW, 0).map(|(s, _)| s)
    }

    fn day(y: i64, m: u32, d: u32) -> i64 {
        timefmt::days_from_civil(y, m, d) * 86_400
    }

    #[test]
    fn absolute_dates_and_zones() {
        assert_eq!(at("2026-03-01T10:00:00Z"), Some(NOW));
        assert_eq!(at("2026-03-01T10:00:00+02:00"), Some(NOW - 7200));
        assert_eq!(at("Sun, 01 Mar 2026 10:00:00 +0000"), Some(NOW));
        assert_eq!(at("Mar 1, 2026"), Some(day(2026, 3, 1)));
        assert_eq!(at("03/01/2026"), Some(day(2026, 3, 1)));
        assert_eq!(at("20260301 1000"), Some(NOW));
        assert_eq!(at("2026-03-01 5pm"), Some(day(2026, 3, 1) + 17 * 3600));
        assert_eq!(at("2026-02-30"), None);
        assert_eq!(at("garbage"), None);
        assert_eq!(at("@5"), Some(5));
    }

    #[test]
    fn relative_items() {
        assert_eq!(at("yesterday"), Some(NOW - 86_400));
        assert_eq!(at("2026-03-31 -1 month"), Some(day(2026, 3, 3)));
        assert_eq!(
            at("2026-03-01 10:00 +3 hours"),
            Some(day(2026, 3, 1) + 8 * 3600)
        );
        assert_eq!(at("2 weeks ago"), Some(NOW - 14 * 86_400));
        assert_eq!(at("next monday"), Some(day(2026, 3, 2)));
        assert_eq!(at("last friday"), Some(day(2026, 2, 27)));
        assert_eq!(at("sunday"), Some(day(2026, 3, 1)));
        assert_eq!(at("next sunday"), Some(day(2026, 3, 8)));
        assert_eq!(at("2026-03-04 next monday"), Some(day(2026, 3, 4)));
    }

    #[test]
    fn huge_values_are_refused_not_overflowed() {
        assert_eq!(at("9223372036854775807-01-01"), None);
        assert_eq!(
            at("9223372036854775807 days 9223372036854775807 days"),
            None
        );
        assert_eq!(at("100000000000 years"), None);
        assert_eq!(at("@9223372036854775807"), None);
        assert_eq!(at("@-1.5"), Some(-2));
    }
}
