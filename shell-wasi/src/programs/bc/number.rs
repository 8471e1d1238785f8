//! bc's numbers: exact decimals (`value = digits / 10^scale`) with GNU
//! bc's rules for the scale of each result (number.c): sums keep the
//! larger scale, products `min(a+b, max(scale, a, b))`, quotients the
//! global scale, all truncated toward zero.

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// Longest scale or exponent a program may ask for: bc's own limit is
/// far larger, but the sandbox's memory is not.
pub(crate) const MAX_DIGITS: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Num {
    pub(crate) v: BigInt,
    pub(crate) scale: u32,
}

fn ten_pow(n: u32) -> BigInt {
    num_traits::pow(BigInt::from(10u32), n as usize)
}

impl Num {
    pub(crate) fn zero() -> Self {
        Self {
            v: BigInt::zero(),
            scale: 0,
        }
    }

    pub(crate) fn from_i64(n: i64) -> Self {
        Self {
            v: BigInt::from(n),
            scale: 0,
        }
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.v.is_zero()
    }

    pub(crate) fn is_negative(&self) -> bool {
        self.v.is_negative()
    }

    /// The same value with `scale` digits after the point (truncating).
    pub(crate) fn rescale(&self, scale: u32) -> Self {
        let v = match scale.cmp(&self.scale) {
            Ordering::Equal => self.v.clone(),
            Ordering::Greater => &self.v * ten_pow(scale - self.scale),
            Ordering::Less => &self.v / ten_pow(self.scale - scale),
        };
        Self { v, scale }
    }

    /// The integer part, as bc's num2long reads it (0 when too large).
    pub(crate) fn to_i64(&self) -> i64 {
        self.rescale(0).v.to_i64().unwrap_or(0)
    }

    /// Whether the integer part fits in an i64.
    pub(crate) fn fits_i64(&self) -> bool {
        self.rescale(0).v.to_i64().is_some()
    }

    pub(crate) fn add(&self, o: &Self) -> Self {
        let s = self.scale.max(o.scale);
        Self {
            v: self.rescale(s).v + o.rescale(s).v,
            scale: s,
        }
    }

    pub(crate) fn sub(&self, o: &Self) -> Self {
        let s = self.scale.max(o.scale);
        Self {
            v: self.rescale(s).v - o.rescale(s).v,
            scale: s,
        }
    }

    pub(crate) fn neg(&self) -> Self {
        Self {
            v: -self.v.clone(),
            scale: self.scale,
        }
    }

    pub(crate) fn mul(&self, o: &Self, scale: u32) -> Self {
        let full = self.scale + o.scale;
        let rs = full.min(scale.max(self.scale).max(o.scale));
        Self {
            v: &self.v * &o.v,
            scale: full,
        }
        .rescale(rs)
    }

    /// `self / o` to `scale` digits; `None` for division by zero.
    pub(crate) fn div(&self, o: &Self, scale: u32) -> Option<Self> {
        if o.is_zero() {
            return None;
        }
        // (a/10^sa) / (b/10^sb) * 10^scale = a * 10^(scale + sb - sa) / b
        let shift = i64::from(scale) + i64::from(o.scale) - i64::from(self.scale);
        let v = if shift >= 0 {
            (&self.v * ten_pow(u32::try_from(shift).unwrap_or(0))) / &o.v
        } else {
            &self.v / (&o.v * ten_pow(u32::try_from(-shift).unwrap_or(0)))
        };
        Some(Self { v, scale })
    }

    /// bc's `%`: `a - (a / b) * b`, the quotient at `scale`.
    pub(crate) fn modulo(&self, o: &Self, scale: u32) -> Option<Self> {
        let q = self.div(o, scale)?;
        let rscale = self.scale.max(o.scale + scale);
        let prod = q.mul(o, rscale);
        Some(self.sub(&prod).rescale(rscale.max(self.sub(&prod).scale)))
    }

    /// bc_raise: `self ^ exp` for an integer exponent.
    pub(crate) fn pow(&self, exp: i64, scale: u32) -> Option<Self> {
        if exp == 0 {
            return Some(Self::from_i64(1));
        }
        let (neg, mut e) = (exp < 0, exp.unsigned_abs());
        let rscale = if neg {
            scale
        } else {
            let s = u64::from(self.scale).saturating_mul(e);
            u32::try_from(s.min(u64::from(scale.max(self.scale)))).unwrap_or(u32::MAX)
        };
        let mut power = self.clone();
        let mut pwrscale = self.scale;
        while e & 1 == 0 {
            pwrscale = pwrscale.saturating_mul(2);
            power = power.mul(&power, pwrscale);
            e >>= 1;
        }
        let mut temp = power.clone();
        let mut calcscale = pwrscale;
        e >>= 1;
        while e > 0 {
            pwrscale = pwrscale.saturating_mul(2);
            power = power.mul(&power, pwrscale);
            if e & 1 == 1 {
                calcscale = calcscale.saturating_add(pwrscale);
                temp = temp.mul(&power, calcscale);
            }
            e >>= 1;
        }
        if neg {
            return Self::from_i64(1).div(&temp, rscale);
        }
        if temp.scale > rscale {
            temp = temp.rescale(rscale);
        }
        Some(temp)
    }

    /// The square root at `max(scale, self.scale)`; `None` when negative.
    pub(crate) fn sqrt(&self, scale: u32) -> Option<Self> {
        if self.is_negative() {
            return None;
        }
        let rs = scale.max(self.scale);
        // floor(sqrt(v * 10^(2rs - s)))
        let v = (&self.v * ten_pow(2 * rs - self.scale)).sqrt();
        Some(Self { v, scale: rs })
    }

    pub(crate) fn cmp(&self, o: &Self) -> Ordering {
        let s = self.scale.max(o.scale);
        self.rescale(s).v.cmp(&o.rescale(s).v)
    }

    /// bc's `length()`: significant digits.
    pub(crate) fn length(&self) -> u64 {
        if self.is_zero() {
            return 1;
        }
        let digits = self.v.magnitude().to_string().len() as u64;
        digits.max(u64::from(self.scale))
    }

    /// A constant as written, read in base `ibase` the way bc does:
    /// a single digit is its own value; in longer numbers a digit too
    /// large for the base counts as the base's largest digit.
    pub(crate) fn parse(text: &str, ibase: u32) -> Self {
        let value = |c: char| c.to_digit(36).unwrap_or(0);
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        if ibase == 10 {
            let digits: String = int
                .chars()
                .chain(frac.chars())
                .map(|c| char::from_digit(value(c).min(9), 10).unwrap_or('0'))
                .collect();
            let single = text.len() == 1;
            let v = if single {
                BigInt::from(value(text.chars().next().unwrap_or('0')))
            } else if digits.is_empty() {
                BigInt::zero()
            } else {
                digits.parse().unwrap_or_default()
            };
            return Self {
                v,
                scale: u32::try_from(frac.len()).unwrap_or(0),
            };
        }
        let base = BigInt::from(ibase);
        let single = text.len() == 1;
        let digit = |c: char| {
            let d = value(c);
            if single { d } else { d.min(ibase - 1) }
        };
        let mut result = Num::zero();
        for c in int.chars() {
            result.v = result.v * &base + BigInt::from(digit(c));
        }
        if !frac.is_empty() {
            let mut f = BigInt::zero();
            let mut mult = BigInt::one();
            for c in frac.chars() {
                f = f * &base + BigInt::from(digit(c));
                mult *= &base;
            }
            let fnum = Num { v: f, scale: 0 }
                .div(
                    &Num { v: mult, scale: 0 },
                    u32::try_from(frac.len()).unwrap_or(0),
                )
                .unwrap_or_else(Num::zero);
            result = result.add(&fnum);
        }
        result
    }

    /// The text bc prints for the number in base `obase`.
    pub(crate) fn format(&self, obase: u64) -> String {
        let mut out = String::new();
        if self.is_negative() {
            out.push('-');
        }
        if self.is_zero() {
            out.push('0');
            return out;
        }
        let mag = Num {
            v: self.v.abs(),
            scale: self.scale,
        };
        if obase == 10 {
            let s = mag.v.to_string();
            let sc = self.scale as usize;
            if s.len() > sc {
                let (i, f) = s.split_at(s.len() - sc);
                out.push_str(i);
                if sc > 0 {
                    out.push('.');
                    out.push_str(f);
                }
            } else {
                out.push('.');
                out.push_str(&"0".repeat(sc - s.len()));
                out.push_str(&s);
            }
            return out;
        }
        let width = (obase - 1).to_string().len();
        let digit = |d: u64, space: bool, out: &mut String| {
            if obase <= 16 {
                out.push(char::from(b"0123456789ABCDEF"[d as usize]));
            } else {
                if space {
                    out.push(' ');
                }
                out.push_str(&format!("{d:0width$}"));
            }
        };
        let int = mag.rescale(0).v;
        let base = BigInt::from(obase);
        let mut stack = Vec::new();
        let mut n = int.clone();
        while !n.is_zero() {
            let (q, r) = n.div_rem(&base);
            stack.push(r.to_u64().unwrap_or(0));
            n = q;
        }
        for d in stack.iter().rev() {
            digit(*d, true, &mut out);
        }
        if self.scale > 0 {
            out.push('.');
            let mut frac = mag.sub(&Num { v: int, scale: 0 });
            let b = Num {
                v: base.clone(),
                scale: 0,
            };
            let mut t = BigInt::one();
            let mut first = true;
            while t.to_string().len() <= self.scale as usize {
                frac = frac.mul(&b, self.scale);
                let d = frac.rescale(0).v;
                frac = frac.sub(&Num {
                    v: d.clone(),
                    scale: 0,
                });
                digit(d.to_u64().unwrap_or(0), !first, &mut out);
                first = false;
                t *= &base;
            }
        }
        out
    }
}

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.format(10))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Num {
        let neg = s.starts_with('-');
        let x = Num::parse(s.trim_start_matches('-'), 10);
        if neg { x.neg() } else { x }
    }

    #[test]
    fn arithmetic_follows_bc_scales() {
        assert_eq!(
            n("1").div(&n("3"), 5).map(|x| x.to_string()),
            Some(".33333".into())
        );
        assert_eq!(n("1.5").mul(&n("1.5"), 0).to_string(), "2.2");
        assert_eq!(n("1.5").mul(&n("1.5"), 3).to_string(), "2.25");
        assert_eq!(
            n("5.5").modulo(&n("2"), 0).map(|x| x.to_string()),
            Some("1.5".into())
        );
        assert_eq!(
            n("-5").modulo(&n("3"), 0).map(|x| x.to_string()),
            Some("-2".into())
        );
        assert_eq!(
            n("2").pow(-2, 3).map(|x| x.to_string()),
            Some(".250".into())
        );
        assert_eq!(
            n("2").sqrt(5).map(|x| x.to_string()),
            Some("1.41421".into())
        );
        assert_eq!(n("0.00").to_string(), "0");
        assert_eq!(n("10.5").format(16), "A.8");
        assert_eq!(n("5.25").format(2), "101.0100000");
        assert_eq!(n("12345").format(20), " 01 10 17 05");
        assert_eq!(Num::parse("1A", 10).to_string(), "19");
        assert_eq!(Num::parse("FF", 16).to_string(), "255");
    }
}
