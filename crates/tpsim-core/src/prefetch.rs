//! Software prefetch: a hint that a value will be read soon, so that the cache misses of a
//! batch of scattered per-node records (the radios an air frame reaches) overlap instead of
//! stalling one after another. A hint only: it never changes what a program computes, and it
//! is a no-op on targets without one.

/// Asks the CPU to bring the cache lines of `value` (at most `lines` of them, 64 bytes each)
/// into the cache. Never faults, whatever the address.
#[inline(always)]
pub fn prefetch<T>(value: &T, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = value as *const T as *const i8;
        let n = lines.min(std::mem::size_of::<T>().div_ceil(64));
        for i in 0..n {
            // SAFETY: SSE is part of the x86-64 baseline (the intrinsic's only requirement), and
            // a prefetch does not dereference its address, which may be any value.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.wrapping_add(64 * i));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (value, lines);
    }
}
