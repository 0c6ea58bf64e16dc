//! Synthetic work kernels shared by every scenario: the fixed integer loop
//! (marl's doSomeWork shape), the Mandelbrot pixel, a calibrated spin, and a
//! small deterministic PRNG so every scheduler sees the same random sequence.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Iterations of [`some_work`] that make one "some-work" unit. marl uses
/// 100,000; we use a tenth so the quick suite fits its time budget on 2 cores.
pub const SOME_WORK_ITERS: u32 = 10_000;

/// A dependent chain of integer operations the compiler cannot fold away.
/// Each iteration depends on the previous one, so the cost is linear in `iters`.
#[inline(never)]
pub fn some_work(seed: u32, iters: u32) -> u32 {
    let mut x = black_box(seed) | 1;
    for i in 0..iters {
        x = (x << 4) ^ (x >> 3) ^ i;
        x = x.wrapping_mul(0x9E37_79B1) | 0x1020;
    }
    black_box(x)
}

/// Largest iteration count of the Mandelbrot escape loop.
pub const MANDEL_MAX_ITER: u32 = 256;

/// Escape-time iteration count of pixel (`px`, `py`) of a `side` x `side`
/// image over the region [-2, 1] x [-1.5, 1.5].
pub fn mandel_pixel(px: u32, py: u32, side: u32) -> u32 {
    let cx = -2.0 + 3.0 * f64::from(px) / f64::from(side);
    let cy = -1.5 + 3.0 * f64::from(py) / f64::from(side);
    let (mut zx, mut zy) = (0.0f64, 0.0f64);
    let mut n = 0;
    while n < MANDEL_MAX_ITER && zx * zx + zy * zy <= 4.0 {
        let t = zx * zx - zy * zy + cx;
        zy = 2.0 * zx * zy + cy;
        zx = t;
        n += 1;
    }
    n
}

/// Order-sensitive checksum of an image: detects a pixel written to the wrong
/// place, not only a wrong sum. Kept to 52 bits so it survives JSON's f64.
pub fn image_checksum(pixels: impl Iterator<Item = u32>) -> u64 {
    let sum = pixels.enumerate().fold(0u64, |acc, (i, v)| {
        acc.wrapping_add((i as u64 + 1).wrapping_mul(u64::from(v) + 1))
    });
    sum & ((1 << 52) - 1)
}

/// How many [`some_work`] iterations take one microsecond on this thread.
/// Measured, never assumed: the trickle scenario sizes its tasks in time.
pub fn iters_per_micro() -> f64 {
    let probe = 200_000;
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        some_work(7, probe);
        best = best.min(t.elapsed());
    }
    f64::from(probe) / (best.as_secs_f64() * 1e6).max(1e-3)
}

/// xorshift64*: tiny, deterministic, good enough to pick intervals.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mandel_is_deterministic_and_bounded() {
        assert_eq!(mandel_pixel(0, 0, 10), mandel_pixel(0, 0, 10));
        // The origin (pixel at 2/3 across, half down) never escapes.
        assert_eq!(mandel_pixel(20, 15, 30), MANDEL_MAX_ITER);
    }

    #[test]
    fn rng_range_stays_in_bounds() {
        let mut r = Rng::new(3);
        assert!((0..1000).all(|_| (20..=100).contains(&r.range(20, 100))));
    }
}
