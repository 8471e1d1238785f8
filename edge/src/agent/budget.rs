//! Pricing a model call before and after it, in integer micros.
//!
//! Before: the worst case (the prompt, estimated, plus `max_tokens` of
//! output) must fit in what is left of the budget; `max_tokens` is lowered
//! until it does. After: the call costs what the provider reports, capped
//! at what was left, so a provider that over-reports can never push the
//! charge past `max_cost_micros`.

/// Fewer output tokens than this is not a useful call.
pub const MIN_USEFUL_OUTPUT: u32 = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prices {
    pub input_micros_per_million: i64,
    pub output_micros_per_million: i64,
}

impl Prices {
    /// Micros for `input` and `output` tokens, rounded up.
    pub fn cost(&self, input: i64, output: i64) -> i64 {
        let micros = |tokens: i64, per_million: i64| {
            (i128::from(tokens.max(0)) * i128::from(per_million.max(0)) + 999_999) / 1_000_000
        };
        i64::try_from(
            micros(input, self.input_micros_per_million)
                + micros(output, self.output_micros_per_million),
        )
        .unwrap_or(i64::MAX)
    }

    /// The largest `max_tokens` (up to `cap`) whose worst case fits in
    /// `remaining`, or `None` when not even a useful answer fits.
    pub fn fit_max_tokens(&self, prompt_tokens: i64, cap: u32, remaining: i64) -> Option<u32> {
        let left = remaining - self.cost(prompt_tokens, 0);
        if left <= 0 {
            return None;
        }
        let fit = if self.output_micros_per_million <= 0 {
            i64::from(cap)
        } else {
            let tokens = i128::from(left) * 1_000_000 / i128::from(self.output_micros_per_million);
            i64::try_from(tokens)
                .unwrap_or(i64::MAX)
                .min(i64::from(cap))
        };
        let fit = u32::try_from(fit).unwrap_or(cap);
        (fit >= MIN_USEFUL_OUTPUT).then_some(fit)
    }
}

/// A rough token count for text: four bytes a token, rounded up.
pub fn estimate_tokens(chars: usize) -> i64 {
    i64::try_from(chars.div_ceil(4)).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LUNA: Prices = Prices {
        input_micros_per_million: 50_000,
        output_micros_per_million: 200_000,
    };

    #[test]
    fn costs_round_up_to_the_micro() {
        assert_eq!(LUNA.cost(4_700, 514), 235 + 103);
        assert_eq!(LUNA.cost(1, 0), 1);
        assert_eq!(LUNA.cost(0, 0), 0);
    }

    #[test]
    fn max_tokens_is_lowered_to_fit() {
        assert_eq!(LUNA.fit_max_tokens(1_000, 4_096, 1_000_000), Some(4_096));
        // 100 micros left after a 1,000-token prompt (50 micros): 500 tokens.
        assert_eq!(LUNA.fit_max_tokens(1_000, 4_096, 150), Some(500));
        assert_eq!(LUNA.fit_max_tokens(1_000, 4_096, 55), None);
        assert_eq!(LUNA.fit_max_tokens(1_000_000, 4_096, 40_000), None);
    }
}
