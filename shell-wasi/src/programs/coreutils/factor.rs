//! `factor [NUMBER...]`: prime factors, from the operands or from the
//! whitespace-separated words of stdin. Numbers below 2^64 are factored
//! with 64-bit Miller–Rabin and Pollard–Brent; larger ones (any size)
//! with the same methods over big integers. As in GNU 9.1, results below
//! 2^127 are buffered in 512-byte blocks while larger ones are written at
//! once, which decides their order in a pipe.

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};

use super::Process;
use super::args::Spec;

/// GNU's FACTOR_PIPE_BUF: how much small-number output it holds back.
const PIPE_BUF: usize = 512;

pub(crate) fn factor(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "",
        long: &[],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let words: Vec<String> = if args.operands.is_empty() {
        let data = p.io.stdin.borrow_mut().read_all();
        String::from_utf8_lossy(&data)
            .split([' ', '\t', '\n'])
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    } else {
        args.operands.clone()
    };
    let mut out = Output::default();
    let mut ok = true;
    for word in &words {
        let text = word.trim_start_matches(' ');
        let text = text.strip_prefix('+').unwrap_or(text);
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            p.error(&format!(
                "{} is not a valid positive integer",
                p.quote(word)
            ));
            ok = false;
            continue;
        }
        let Ok(n) = text.parse::<BigUint>() else {
            continue;
        };
        let line = format_line(&n);
        if n.bits() < 128 {
            out.buffered(&line);
        } else {
            out.direct(&line);
        }
        if super::deadline_passed() {
            break;
        }
    }
    out.finish();
    super::write_all(p, &out.written);
    i32::from(!ok)
}

/// stdout as GNU's factor fills it: `written` is what reached the pipe.
#[derive(Default)]
struct Output {
    written: Vec<u8>,
    held: Vec<u8>,
}

impl Output {
    fn buffered(&mut self, line: &str) {
        self.held.extend_from_slice(line.as_bytes());
        if self.held.len() >= PIPE_BUF {
            let cut = self
                .held
                .get(..PIPE_BUF)
                .and_then(|h| h.iter().rposition(|&b| b == b'\n'))
                .map_or(self.held.len(), |i| i + 1);
            self.written.extend(self.held.drain(..cut));
        }
    }

    fn direct(&mut self, line: &str) {
        self.written.extend_from_slice(line.as_bytes());
    }

    fn finish(&mut self) {
        self.written.append(&mut self.held);
    }
}

/// `N: P1 P2 ...` with the primes in ascending order.
fn format_line(n: &BigUint) -> String {
    let mut primes: Vec<BigUint> = Vec::new();
    if let Some(small) = n.to_u64() {
        primes.extend(factor_u64(small).into_iter().map(BigUint::from));
    } else if let Some(medium) = n.to_u128() {
        primes.extend(factor_u128(medium).into_iter().map(BigUint::from));
    } else {
        factor_big(n.clone(), &mut primes);
    }
    primes.sort();
    let mut line = format!("{n}:");
    for prime in &primes {
        line.push(' ');
        line.push_str(&prime.to_string());
    }
    line.push('\n');
    line
}

fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    u64::try_from(u128::from(a) * u128::from(b) % u128::from(m)).unwrap_or(0)
}

fn pow_mod(mut base: u64, mut exp: u64, m: u64) -> u64 {
    let mut result = 1 % m;
    base %= m;
    while exp > 0 {
        if exp & 1 == 1 {
            result = mul_mod(result, base, m);
        }
        base = mul_mod(base, base, m);
        exp >>= 1;
    }
    result
}

/// Deterministic Miller–Rabin for every 64-bit number.
fn is_prime_u64(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for b in BASES {
        if n.is_multiple_of(b) {
            return n == b;
        }
    }
    let (mut d, mut s) = (n - 1, 0);
    while d % 2 == 0 {
        d /= 2;
        s += 1;
    }
    'bases: for a in BASES {
        let mut x = pow_mod(a, d, n);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, n);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

/// A nontrivial divisor of the composite `n` (Pollard–Brent).
fn rho_u64(n: u64) -> u64 {
    if n.is_multiple_of(2) {
        return 2;
    }
    for c in 1..u64::MAX {
        let f = |x: u64| (mul_mod(x, x, n) + c) % n;
        let (mut x, mut y, mut d) = (2u64, 2u64, 1u64);
        while d == 1 {
            x = f(x);
            y = f(f(y));
            d = x.abs_diff(y).gcd(&n);
        }
        if d != n {
            return d;
        }
    }
    n
}

fn factor_u64(mut n: u64) -> Vec<u64> {
    let mut out = Vec::new();
    if n < 2 {
        return out;
    }
    for p in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47] {
        while n.is_multiple_of(p) {
            out.push(p);
            n /= p;
        }
    }
    let mut stack = vec![n];
    while let Some(m) = stack.pop() {
        if m == 1 {
            continue;
        }
        if is_prime_u64(m) {
            out.push(m);
            continue;
        }
        let d = rho_u64(m);
        stack.push(d);
        stack.push(m / d);
    }
    out
}

/// Montgomery arithmetic modulo an odd `m` below 2^128, so 128-bit
/// numbers need no 256-bit division.
struct Mont {
    m: u128,
    /// -m⁻¹ mod 2^128.
    neg_inv: u128,
    /// 2^128 mod m: one, in Montgomery form.
    one: u128,
}

fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    let mask = u128::from(u64::MAX);
    let (a1, a0) = (a >> 64, a & mask);
    let (b1, b0) = (b >> 64, b & mask);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 64) + (p01 & mask) + (p10 & mask);
    let lo = (p00 & mask) | (mid << 64);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (hi, lo)
}

impl Mont {
    fn new(m: u128) -> Self {
        let mut inv = m;
        for _ in 0..7 {
            inv = inv.wrapping_mul(2u128.wrapping_sub(m.wrapping_mul(inv)));
        }
        Self {
            m,
            neg_inv: inv.wrapping_neg(),
            one: (u128::MAX % m + 1) % m,
        }
    }

    /// a·b·2⁻¹²⁸ mod m.
    fn mul(&self, a: u128, b: u128) -> u128 {
        let (hi, lo) = mul_wide(a, b);
        let u = lo.wrapping_mul(self.neg_inv);
        let (uh, ul) = mul_wide(u, self.m);
        let carry = u128::from(lo.overflowing_add(ul).1);
        let (t, over1) = hi.overflowing_add(uh);
        let (t, over2) = t.overflowing_add(carry);
        if over1 || over2 || t >= self.m {
            t.wrapping_sub(self.m)
        } else {
            t
        }
    }

    fn add(&self, a: u128, b: u128) -> u128 {
        let (t, over) = a.overflowing_add(b);
        if over || t >= self.m {
            t.wrapping_sub(self.m)
        } else {
            t
        }
    }

    /// `a` (below m) in Montgomery form: a·2^128 mod m, by doubling.
    fn to_mont(&self, a: u128) -> u128 {
        let mut x = a % self.m;
        for _ in 0..128 {
            x = self.add(x, x);
        }
        x
    }

    fn pow(&self, base: u128, mut exp: u128) -> u128 {
        let (mut result, mut b) = (self.one, base);
        while exp > 0 {
            if exp & 1 == 1 {
                result = self.mul(result, b);
            }
            b = self.mul(b, b);
            exp >>= 1;
        }
        result
    }
}

fn is_prime_u128(n: u128) -> bool {
    if let Ok(small) = u64::try_from(n) {
        return is_prime_u64(small);
    }
    if n.is_multiple_of(2) {
        return false;
    }
    let mont = Mont::new(n);
    let minus_one = n - mont.one;
    let (mut d, mut s) = (n - 1, 0);
    while d % 2 == 0 {
        d /= 2;
        s += 1;
    }
    'bases: for a in [
        2u128, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53,
    ] {
        let mut x = mont.pow(mont.to_mont(a), d);
        if x == mont.one || x == minus_one {
            continue;
        }
        for _ in 1..s {
            x = mont.mul(x, x);
            if x == minus_one {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

fn gcd_u128(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A nontrivial divisor of the odd composite `n` (Brent's rho with
/// batched gcds, iterating in Montgomery form).
fn rho_u128(n: u128) -> u128 {
    let mont = Mont::new(n);
    let mut c = 1u128;
    loop {
        let f = |x: u128| mont.add(mont.mul(x, x), c);
        let (mut y, mut r, mut q) = (2u128, 1u64, mont.one);
        let (mut x, mut ys, mut g) = (y, y, 1u128);
        while g == 1 {
            x = y;
            for _ in 0..r {
                y = f(y);
            }
            let mut k = 0;
            while k < r && g == 1 {
                ys = y;
                for _ in 0..128.min(r - k) {
                    y = f(y);
                    q = mont.mul(q, x.abs_diff(y));
                }
                g = gcd_u128(q, n);
                k += 128;
            }
            r *= 2;
            if super::deadline_passed() {
                return n;
            }
        }
        if g == n {
            // The batch overshot: step back one at a time.
            loop {
                ys = f(ys);
                g = gcd_u128(x.abs_diff(ys), n);
                if g > 1 {
                    break;
                }
            }
        }
        if g != n {
            return g;
        }
        c += 1;
    }
}

fn factor_u128(mut n: u128) -> Vec<u128> {
    let mut out = Vec::new();
    for p in 2u128..1000 {
        while n.is_multiple_of(p) {
            out.push(p);
            n /= p;
        }
    }
    let mut stack = vec![n];
    while let Some(m) = stack.pop() {
        if m == 1 {
            continue;
        }
        if let Ok(small) = u64::try_from(m) {
            out.extend(factor_u64(small).into_iter().map(u128::from));
            continue;
        }
        if is_prime_u128(m) {
            out.push(m);
            continue;
        }
        let d = rho_u128(m);
        if d == m {
            out.push(m);
            continue;
        }
        stack.push(d);
        stack.push(m / d);
    }
    out
}

fn is_prime_big(n: &BigUint) -> bool {
    let two = BigUint::from(2u32);
    if *n < two {
        return false;
    }
    let one = BigUint::one();
    let n1 = n - &one;
    let s = n1.trailing_zeros().unwrap_or(0);
    let d = &n1 >> s;
    'bases: for a in [
        2u32, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53,
    ] {
        let a = BigUint::from(a);
        if a >= *n {
            continue;
        }
        let mut x = a.modpow(&d, n);
        if x == one || x == n1 {
            continue;
        }
        for _ in 1..s {
            x = x.modpow(&two, n);
            if x == n1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

fn rho_big(n: &BigUint) -> BigUint {
    let one = BigUint::one();
    let mut c = BigUint::one();
    loop {
        let f = |x: &BigUint| (x * x + &c) % n;
        let (mut x, mut y) = (BigUint::from(2u32), BigUint::from(2u32));
        let mut d = one.clone();
        while d == one {
            x = f(&x);
            y = f(&f(&y));
            let diff = if x > y { &x - &y } else { &y - &x };
            d = diff.gcd(n);
            if super::deadline_passed() {
                return n.clone();
            }
        }
        if d != *n {
            return d;
        }
        c += 1u32;
    }
}

fn factor_big(n: BigUint, out: &mut Vec<BigUint>) {
    let mut n = n;
    for p in 2u32..1000 {
        let bp = BigUint::from(p);
        while (&n % &bp).is_zero() {
            out.push(bp.clone());
            n /= &bp;
        }
    }
    let mut stack = vec![n];
    while let Some(m) = stack.pop() {
        if m.is_one() {
            continue;
        }
        if let Some(medium) = m.to_u128() {
            out.extend(factor_u128(medium).into_iter().map(BigUint::from));
            continue;
        }
        if is_prime_big(&m) {
            out.push(m);
            continue;
        }
        let d = rho_big(&m);
        if d == m {
            // Gave up (deadline): report what is left as it is.
            out.push(m);
            continue;
        }
        let q = &m / &d;
        stack.push(d);
        stack.push(q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_numbers() {
        assert_eq!(format_line(&BigUint::from(12u32)), "12: 2 2 3\n");
        assert_eq!(format_line(&BigUint::from(1u32)), "1:\n");
        assert_eq!(
            format_line(&BigUint::from(u64::MAX)),
            "18446744073709551615: 3 5 17 257 641 65537 6700417\n"
        );
        assert!(is_prime_u64(1_000_000_007));
        let big: u128 = 76_426_143_559 * 416_119_224_444_019_914_862_711;
        let mut f = factor_u128(big);
        f.sort_unstable();
        assert_eq!(f.iter().product::<u128>(), big);
        assert!(f.iter().all(|&p| is_prime_u128(p)));
    }
}
