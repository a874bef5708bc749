//! Software prefetch: a hint that a value will be read soon, so that the cache misses of a
//! batch of scattered per-node records (the radios an air frame reaches) overlap instead of
//! stalling one after another. A hint only: it never changes what a program computes, and it
//! is a no-op on targets without one.

/// Asks the CPU to bring the cache lines of `value` (at most `lines` of them, 64 bytes each)
/// into the cache. Never faults, whatever the address.
#[inline(always)]
pub fn prefetch<T>(value: &T, lines: usize) {
    let n = lines.min(std::mem::size_of::<T>().div_ceil(64));
    prefetch_lines(value as *const T as *const u8, n);
}

/// Asks the CPU to bring the cache lines that hold `items` (at most `lines` of them, from the
/// first) into the cache. Never faults.
#[inline(always)]
pub fn prefetch_slice<T>(items: &[T], lines: usize) {
    let p = items.as_ptr() as *const u8;
    let n = ((p as usize % 64) + std::mem::size_of_val(items)).div_ceil(64);
    prefetch_lines(p, lines.min(n));
}

/// Prefetches `n` lines of 64 bytes from `p` on.
#[inline(always)]
fn prefetch_lines(p: *const u8, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        for i in 0..n {
            // SAFETY: SSE is part of the x86-64 baseline (the intrinsic's only requirement), and
            // a prefetch does not dereference its address, which may be any value.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    p.wrapping_add(64 * i) as *const i8
                );
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (p, n);
    }
}
