//! Per-organisation request rate: a token bucket in memory per node. (The
//! number of runs in flight, the other limit, is counted in the store, so
//! it holds across nodes.)

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct RateLimiter {
    per_minute: u32,
    buckets: Mutex<HashMap<String, Bucket>>,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    pub fn new(per_minute: u32) -> RateLimiter {
        RateLimiter {
            per_minute,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token for `org`, or says how long until one is free.
    pub fn take(&self, org: &str) -> Result<(), Duration> {
        let capacity = f64::from(self.per_minute.max(1));
        let per_second = capacity / 60.0;
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.entry(org.to_string()).or_insert(Bucket {
            tokens: capacity,
            at: now,
        });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * per_second)
            .min(capacity);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / per_second))
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_burst_up_to_the_rate_passes_then_waits() {
        let limiter = super::RateLimiter::new(3);
        for _ in 0..3 {
            assert!(limiter.take("org").is_ok());
        }
        let wait = limiter.take("org").unwrap_err();
        assert!(
            wait.as_secs_f64() > 10.0 && wait.as_secs_f64() <= 20.0,
            "{wait:?}"
        );
        assert!(limiter.take("other").is_ok());
    }
}
