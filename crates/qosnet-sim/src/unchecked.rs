//! Indexing without bounds checks, for the cycle loop only.
//!
//! Why: every index the per-cycle stages use comes from the network's shape (routers,
//! ports, VCs, buffer slots), fixed and validated when the simulation is built, so the
//! bounds checks never fire; but each costs a length load, a compare and a branch, and
//! after any store through `self` the length must be loaded again. On the 8x8 mesh
//! benchmark they were a fifth of all instructions (measured: configs/bench/README.md).
//!
//! Safety net: `at` / `at_mut` assert the bound in debug builds, and the test profile
//! keeps debug assertions at full optimisation, so every test run (the proptest over
//! random configurations included) checks each access the release build trusts.

pub(crate) trait At<T> {
    /// `&self[i]`, bounds checked in debug builds only.
    fn at(&self, i: usize) -> &T;
    /// `&mut self[i]`, bounds checked in debug builds only.
    fn at_mut(&mut self, i: usize) -> &mut T;
    /// `&self[start..start + len]`, bounds checked in debug builds only.
    fn span(&self, start: usize, len: usize) -> &[T];
}

impl<T> At<T> for [T] {
    #[inline(always)]
    fn at(&self, i: usize) -> &T {
        debug_assert!(i < self.len(), "index {i} out of {}", self.len());
        // SAFETY: the cycle loop indexes only within the network's validated shape; the
        // debug assertion above checks it in every test run.
        unsafe { self.get_unchecked(i) }
    }

    #[inline(always)]
    fn at_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.len(), "index {i} out of {}", self.len());
        // SAFETY: as for `at`.
        unsafe { self.get_unchecked_mut(i) }
    }

    #[inline(always)]
    fn span(&self, start: usize, len: usize) -> &[T] {
        debug_assert!(
            start.checked_add(len).is_some_and(|end| end <= self.len()),
            "span {start}+{len} out of {}",
            self.len()
        );
        // SAFETY: as for `at`.
        unsafe { self.get_unchecked(start..start + len) }
    }
}

#[cfg(test)]
mod tests {
    use super::At;

    #[test]
    fn reads_and_writes_in_bounds() {
        let mut v = vec![1, 2, 3];
        *v.at_mut(1) += 10;
        assert_eq!(*v.at(1), 12);
        assert_eq!(v, [1, 12, 3]);
        assert_eq!(v.span(1, 2), [12, 3]);
        assert!(v.span(3, 0).is_empty());
    }

    #[test]
    #[should_panic(expected = "index 3 out of 3")]
    #[cfg(debug_assertions)]
    fn out_of_bounds_is_caught_with_debug_assertions() {
        let v = [1, 2, 3];
        let _ = v.at(3);
    }

    #[test]
    #[should_panic(expected = "span 2+2 out of 3")]
    #[cfg(debug_assertions)]
    fn span_out_of_bounds_is_caught_with_debug_assertions() {
        let v = [1, 2, 3];
        let _ = v.span(2, 2);
    }
}
