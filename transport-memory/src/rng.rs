//! A tiny seeded pseudo-random generator (SplitMix64), so the simulator's randomness comes only
//! from the seed given to [`crate::MemoryCluster::new`] and never from the environment.

/// SplitMix64: one `u64` of state, a full-period sequence, good enough statistics for choosing
/// cleaning points. Not for cryptography.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose whole future output is fixed by `seed`.
    pub(crate) const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `true` with probability `p` (clamped to `[0, 1]`; NaN counts as 0).
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        // 53 random bits give every multiple of 2^-53 in [0, 1) with equal probability.
        let unit = (self.next_u64() >> 11) as f64 / (1_u64 << 53) as f64;
        unit < p
    }

    /// A uniform value in `lo..=hi` (`lo` when `hi <= lo`).
    pub(crate) fn between(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        // Wraps to 0 only for the full `i64` range.
        let span = hi.abs_diff(lo).wrapping_add(1);
        let pick = if span == 0 {
            self.next_u64()
        } else {
            self.next_u64() % span
        };
        lo.saturating_add_unsigned(pick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(SplitMix64::new(1).next_u64(), SplitMix64::new(2).next_u64());
    }

    #[test]
    fn between_stays_in_range_and_chance_respects_bounds() {
        let mut rng = SplitMix64::new(42);
        for _ in 0..1000 {
            let v = rng.between(3, 9);
            assert!((3..=9).contains(&v));
            assert!(!rng.chance(0.0));
            assert!(rng.chance(1.0));
        }
        assert_eq!(rng.between(5, 5), 5);
        assert_eq!(rng.between(5, 2), 5);
        let _ = rng.between(i64::MIN, i64::MAX);
    }
}
