//! Destination-tag routing on a k-ary n-fly (`topology/fly.rs`; Dally & Towles §4.2,
//! BookSim2's `dest_tag_fly`): the router of stage s sends a packet out on the digit n-1-s
//! of its destination, written in base k, so stage by stage the digits steer it from the
//! most significant down. One path per destination, channels from a stage to the next
//! only: no cycle, so every VC may be used.

use super::Route;
use crate::topology::fat_tree::digit;

#[inline]
pub(super) fn route(k: u32, n: u32, router: usize, dst: usize, vcs: super::VcMask) -> Route {
    let k = k as usize;
    let stage = router / k.pow(n - 1);
    Route { port: (k + digit(dst, k, n - 1 - stage as u32)) as u32, vcs }
}
