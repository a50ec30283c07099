//! What the watchdog reports when no flit has moved for its period: the occupied VCs, and
//! a cycle of them each waiting for the next if the wait-for graph has one (the cyclic
//! channel dependency that deadlocks a wormhole network, e.g. a torus routed without
//! dateline classes; Dally and Seitz's condition).
//!
//! An input VC holding flits waits for the downstream input VCs that must drain before it
//! can move: the one behind the output VC it holds (its flits wait for credits), or, for a
//! header still without an output VC, those behind every VC of its route that another
//! packet holds (one of them must be freed by its tail's credit), and the input VCs still
//! sending those packets' tails. In the preemptive router (document 003 §3.2.1) a VC whose
//! extra buffer holds a preempting message waits for that buffer, and an extra buffer
//! whose preempted message's dummy tail must cross first waits for the VC. Links to a node
//! never block (the sink consumes at once), so a cycle lies among router input VCs only.
//! Not modelled: a resumed packet's wait for its guarding dummy tail's credit, and other
//! waits on state outside the input VCs; a deadlock that closes only through one of them
//! is reported with its occupied VCs and no cycle.

use super::shards::AllRouters;
use crate::config::RouterKind;
use crate::error::{SimError, VcPath};
use crate::ids::RouterId;
use crate::sched::bits;
use crate::topology::Peer;
use crate::units::Cycle;

impl AllRouters<'_> {
    /// The watchdog's error at `now`, after `idle_cycles` in which no flit moved.
    pub(crate) fn deadlock(&self, now: Cycle, idle_cycles: Cycle) -> SimError {
        let stuck = self.occupied_input_vcs();
        let cycle = self.wait_for_cycle(&stuck);
        SimError::Deadlock {
            cycle: now,
            idle_cycles,
            waits_for: cycle.iter().map(|&q| self.input_vc_path(q)).collect(),
            stuck: stuck.iter().map(|&q| self.input_vc_path(q)).collect(),
        }
    }

    /// The input VCs holding flits.
    pub(crate) fn occupied_input_vcs(&self) -> Vec<usize> {
        (0..self.lane_records()).filter(|&q| !self.of_lane(q).in_vc[q].buf.is_empty()).collect()
    }

    /// Input VC record `ivc` as a path: router, input port, lane.
    pub(crate) fn input_vc_path(&self, ivc: usize) -> VcPath {
        let p = &self.first.p;
        let ports = p.ports;
        let (ip, v) = p.lane_place(ivc);
        VcPath { router: RouterId((ip / ports) as u32), port: (ip % ports) as u32, vc: v as u32 }
    }

    /// The occupied input VCs input VC `ivc` waits for (see the module comment).
    pub(crate) fn waits_for(&self, ivc: usize) -> Vec<usize> {
        let me = self.of_lane(ivc);
        let ports = me.p.ports;
        let s = &me.in_vc[ivc];
        if s.buf.is_empty() {
            return Vec::new();
        }
        let (ip, v) = me.p.lane_place(ivc);
        let r = ip / ports;
        let op = r * ports + s.out_port as usize;
        let active = me.ip_active[ip] >> v & 1 == 1;
        // (a VC neither active nor at a header holds a preempted packet's rest: below)
        let header = !active && s.buf.front().is_head();
        let held = if active {
            1u32 << s.out_vc
        } else if header {
            // the VCs of its route others hold
            s.route_vcs & me.op_allocated[op]
        } else {
            0
        };
        let mut waits = Vec::new();
        let mut wait_on = |out_port: usize, held: u32| {
            let op = r * ports + out_port;
            if let Peer::Router { router, port } = me.topo.peer(r, out_port) {
                let down = router.index() * ports + port as usize;
                waits.extend(bits(held).map(|ov| me.p.lane_index(down, ov)));
            }
            if header {
                // the holders whose tails have not crossed yet (`op_open`)
                let open = held & me.op_open[op];
                waits.extend(bits(open).map(|ov| {
                    let (oip, lane) = me.out_vc[me.p.lane_index(op, ov)].owner_input();
                    me.p.lane_index(oip, lane)
                }));
            }
        };
        wait_on(s.out_port as usize, held);
        if let Some(w) = me.va.other_ways.get(ivc).filter(|_| header) {
            // a header with other ways waits for their VCs too (any would do: the graph
            // over-counts, so a cycle here is necessary for a deadlock, not sufficient)
            for way in w.ways.iter().filter(|w| w.vcs != 0) {
                wait_on(way.port as usize, way.vcs & me.op_allocated[r * ports + way.port as usize]);
            }
        }
        if me.p.kind == RouterKind::Preemptive {
            let vcs = me.p.vcs;
            if v < vcs && me.pre.ip_preempting[ip] >> v & 1 == 1 {
                // its extra buffer's preempting message goes first
                waits.push(me.p.lane_index(ip, v + vcs));
            } else if v >= vcs && me.pre.ip_draining[ip] >> (v - vcs) & 1 == 1 {
                // the preempted message's dummy tail crosses first
                waits.push(me.p.lane_index(ip, v - vcs));
            }
        }
        waits.retain(|&q| q != ivc && !self.of_lane(q).in_vc[q].buf.is_empty());
        waits
    }

    /// A cycle of the wait-for graph among the occupied input VCs `stuck`, in order (each
    /// waits for the next, the last for the first); empty if the graph has none. A
    /// depth-first search that keeps its path on an explicit stack (no recursion: a
    /// 32x32 network has 80k VCs).
    pub(crate) fn wait_for_cycle(&self, stuck: &[usize]) -> Vec<usize> {
        const NEW: u8 = 0;
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; self.lane_records()];
        for &root in stuck {
            if state[root] != NEW {
                continue;
            }
            // (VC, the VCs it waits for, how many of them were followed)
            let mut path: Vec<(usize, Vec<usize>, usize)> = vec![(root, self.waits_for(root), 0)];
            state[root] = ON_PATH;
            while let Some((q, next, i)) = path.last_mut() {
                let Some(&n) = next.get(*i) else {
                    state[*q] = DONE;
                    path.pop();
                    continue;
                };
                *i += 1;
                match state[n] {
                    NEW => {
                        state[n] = ON_PATH;
                        path.push((n, self.waits_for(n), 0));
                    }
                    ON_PATH => {
                        let start = path.iter().position(|e| e.0 == n).expect("on the path");
                        return path[start..].iter().map(|e| e.0).collect();
                    }
                    _ => {}
                }
            }
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Simulation;

    fn sim(topology: &str, routing: &str) -> Simulation {
        Simulation::from_toml(
            &format!(
                "[simulation]\nwarmup = 0\nmeasure = 100000\ndrain_limit = 0\nwatchdog = 300\n\
                 [topology]\n{topology}\n[routing]\nkind = \"{routing}\"\n\
                 [router]\nvcs = 1\ninput_buffer = 2\noutput_buffer = 2\n\
                 [[traffic]]\nload = 0.9\nmessage_flits = 16\npacket_flits = 16\n"
            ),
            None,
        )
        .unwrap()
    }

    #[test]
    fn dimension_order_on_a_mesh_never_closes_a_cycle() {
        // Its channel dependencies are acyclic (Dally and Seitz), so at no moment does the
        // wait-for graph have a cycle, though many VCs wait for others.
        let mut s = sim("kind = \"mesh\"\nk = 4\nn = 2", "dor");
        let mut waiting = 0;
        for _ in 0..30 {
            s.advance(100).unwrap();
            let stuck = s.all_routers().occupied_input_vcs();
            waiting += stuck.iter().filter(|&&q| !s.all_routers().waits_for(q).is_empty()).count();
            assert_eq!(s.all_routers().wait_for_cycle(&stuck), Vec::<usize>::new());
        }
        assert!(waiting > 100, "the graph has edges: {waiting}");
    }

    #[test]
    fn a_deadlocked_torus_has_one_and_each_vc_waits_for_the_next() {
        let mut s = sim("kind = \"torus\"\nk = 5\nn = 2", "dor");
        let e = s.run().expect_err("deadlocks");
        assert_cycle(&s, &e);
    }

    #[test]
    fn the_preemptive_router_s_waits_close_cycles_too() {
        // Three classes on a torus without dateline classes: VCs wait for their extra
        // buffers and extra buffers for dummy tails (document 003 §3.2.1) as well as for
        // downstream buffers; the cycles found are real ones. (Not every wait of this router
        // is modelled: see `waits_for`.)
        let classes: String = ["control", "real_time", "best_effort"]
            .iter()
            .map(|c| {
                format!("[[traffic]]\nclass = \"{c}\"\nload = 0.5\nmessage_flits = 16\npacket_flits = 16\n")
            })
            .collect();
        let (mut deadlocks, mut cycles) = (0, 0);
        for seed in 1..=6 {
            let mut s = Simulation::from_toml(
                &format!(
                    "[simulation]\nseed = {seed}\nwarmup = 0\nmeasure = 20000\ndrain_limit = 0\nwatchdog = 300\n\
                     [topology]\nkind = \"torus\"\nk = 6\nn = 2\n[routing]\nkind = \"dor\"\n\
                     [router]\nkind = \"preemptive\"\nvcs = 3\ninput_buffer = 2\noutput_buffer = 2\n{classes}"
                ),
                None,
            )
            .unwrap();
            let Err(e) = s.run() else { continue };
            deadlocks += 1;
            if !s.all_routers().wait_for_cycle(&s.all_routers().occupied_input_vcs()).is_empty() {
                cycles += 1;
                assert_cycle(&s, &e);
            }
        }
        eprintln!("{deadlocks} of 6 seeds deadlocked, {cycles} with a cycle found");
        assert!(
            deadlocks >= 2 && cycles == deadlocks,
            "{deadlocks} of 6 seeds deadlocked, {cycles} with a cycle found"
        );
    }

    /// The error's cycle is one of VCs each waiting for the next.
    fn assert_cycle(s: &Simulation, e: &SimError) {
        let SimError::Deadlock { waits_for, .. } = e else { panic!("not a deadlock: {e}") };
        let cycle = s.all_routers().wait_for_cycle(&s.all_routers().occupied_input_vcs());
        assert!(cycle.len() >= 2, "{e}");
        assert_eq!(*waits_for, cycle.iter().map(|&q| s.all_routers().input_vc_path(q)).collect::<Vec<_>>());
        for (i, &q) in cycle.iter().enumerate() {
            assert!(s.all_routers().waits_for(q).contains(&cycle[(i + 1) % cycle.len()]));
        }
    }
}
