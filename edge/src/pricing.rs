//! What a sandbox's lifetime costs: one vCPU and its memory cap, by the
//! millisecond, at the configured prices, rounded up to the micro. Runs
//! and sandboxes are billed by the same rule; a sandbox also needs the
//! inverse (how long a budget lasts) to end before crossing it.

use std::time::Duration;

use ephemeral_runtime::Limits;

use crate::config::PricesConfig;

/// The compute charge of a sandbox that lived `lifetime`.
pub fn compute_micros(prices: &PricesConfig, lifetime: Duration) -> i64 {
    let ms = i128::try_from(lifetime.as_millis()).unwrap_or(i128::MAX / 4);
    let micros = (ms.saturating_mul(per_second_1024(prices)) + 1_024_000 - 1) / 1_024_000;
    i64::try_from(micros).unwrap_or(i64::MAX)
}

/// Micros per second in 1/1024ths: one vCPU and the memory cap.
fn per_second_1024(prices: &PricesConfig) -> i128 {
    let memory_mib = i128::try_from(Limits::default().memory_bytes >> 20).unwrap_or(0);
    i128::from(prices.compute_micros_per_second) * 1024
        + i128::from(prices.memory_micros_per_gib_second) * memory_mib
}

/// How long a sandbox may live on `reserved` micros so that one more
/// second would still be within it: the sandbox ends then, before the
/// next second could cross the cap. `None` when not even one second fits;
/// `Duration::MAX` when compute is free.
pub fn budget_lasts(prices: &PricesConfig, reserved: i64) -> Option<Duration> {
    if per_second_1024(prices) <= 0 {
        return Some(Duration::MAX);
    }
    let fits = |ms: u64| compute_micros(prices, Duration::from_millis(ms + 1000)) <= reserved;
    if !fits(0) {
        return None;
    }
    // The largest `ms` that fits, by bisection: the charge only grows.
    let (mut lo, mut hi) = (0u64, 1u64 << 50);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(Duration::from_millis(lo))
}

/// The least a sandbox's budget can be: one second of compute.
pub fn one_second(prices: &PricesConfig) -> i64 {
    compute_micros(prices, Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prices() -> PricesConfig {
        PricesConfig {
            compute_micros_per_second: 100,
            memory_micros_per_gib_second: 20,
            ..PricesConfig::default()
        }
    }

    #[test]
    fn a_second_costs_the_vcpu_and_half_a_gib() {
        assert_eq!(compute_micros(&prices(), Duration::from_secs(1)), 110);
        assert_eq!(compute_micros(&prices(), Duration::from_millis(1)), 1);
        assert_eq!(compute_micros(&prices(), Duration::ZERO), 0);
    }

    #[test]
    fn a_budget_lasts_until_one_more_second_would_cross_it() {
        let p = prices();
        for reserved in [110, 111, 1_000, 33_000, 1_000_000] {
            let lasts = budget_lasts(&p, reserved).expect("a second fits");
            let one_more = lasts + Duration::from_secs(1);
            assert!(compute_micros(&p, one_more) <= reserved, "{reserved}");
            let past = one_more + Duration::from_millis(1);
            assert!(compute_micros(&p, past) > reserved, "{reserved}");
        }
        assert_eq!(budget_lasts(&p, 109), None);
        assert_eq!(one_second(&p), 110);
    }
}
