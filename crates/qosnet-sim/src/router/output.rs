//! Stage 5: output buffering and the physical-channel multiplexer. Among the output VCs
//! whose front flit is ready and that hold a credit for the downstream buffer, the output
//! scheduler picks one flit per cycle for the link (document 003 §3).

use super::Routers;
use crate::ids::LinkEnd;
use crate::metrics::trace::Hop;
use crate::net::RouterNet;
use crate::sched::{bits64, RateKeys, SchedTables, Scheduler};
use crate::unchecked::At;
use crate::units::Cycle;

/// Stage 5's own state (`Routers::out`): the output ports' schedulers and rate keys,
/// where each link leads and how long it takes.
#[derive(Clone, Debug)]
pub(crate) struct OutputStage {
    /// Per output port: its scheduler over the output VCs.
    pub sched: Vec<Scheduler>,
    /// The output schedulers' weight and arbitration tables (`SchedTables`; admission
    /// control's reweighted ones, where it runs, live with the reservations).
    pub tables: SchedTables,
    /// Per output VC: the rate-scheduler state behind `OutVc`'s keys.
    pub keys: RateKeys,
    /// Per output port: where its link leads, a router input port or an endpoint.
    pub target: Vec<LinkEnd>,
    /// Per output port: its link's latency (`Params::link`, or the topology's own).
    pub link: Vec<Cycle>,
    /// Per router, a bit per output port that may have work (set eagerly, cleared lazily
    /// when the stage finds the port idle).
    pub r_ports: Vec<u64>,
}

impl Routers {
    #[inline(always)]
    pub(crate) fn output_stage<const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        now: Cycle,
    ) {
        let (ports, vcs) = (self.p.ports, self.p.lanes);
        for port in bits64(*self.out.r_ports.at(r)) {
            let op = r * ports + port;
            let waiting = *self.op_nonempty.at(op);
            if waiting == 0 {
                *self.out.r_ports.at_mut(r) &= !(1 << port);
                continue;
            }
            let base = self.p.lane_index(op, 0);
            let ovcs = self.out_vc.span(base, vcs);
            let key = |v: usize| ovcs.at(v).key;
            let ready = |v: usize| ovcs.at(v).buf.front().ready <= now;
            // (`CreditAt::Crossbar`: every flit here took its credit as it crossed)
            let taken = HOOK && self.p.credit_at_crossbar;
            let offered = if taken { waiting } else { waiting & *self.op_credited.at(op) };
            // (admission control's per-link tables, document 000 §4.1: `HOOK` runs only)
            let tables = if HOOK { net.out_tables(op).unwrap_or(&self.out.tables) } else { &self.out.tables };
            let Some(v) = tables.select(self.out.sched.at_mut(op), offered, key, ready) else {
                continue;
            };
            let ovc = self.out_vc.at_mut(base + v);
            // (its feeder blocks only on a full buffer: `traverse`)
            let was_full = ovc.buf.len() >= self.p.output_depth;
            let flit = self.outbuf.pop(&mut ovc.buf, base + v);
            if ovc.buf.is_empty() {
                *self.op_nonempty.at_mut(op) &= !(1 << v);
            } else {
                let ready = ovc.buf.front().ready;
                if HOOK && flit.is_tail() && self.p.release_on_send && self.out.keys.rated_in::<AGE>(!HOOK) {
                    // the next packet's header follows (`VcRelease::TailSent`): its Vtick
                    let pkt = net.packet(ovc.buf.front().packet());
                    self.out.keys.set_vtick(op, v, pkt.vtick, pkt.flow);
                }
                ovc.key = self.out.keys.key_in::<AGE>(!HOOK, op, v, ready - self.p.d_crossbar, ready);
            }
            if !taken {
                ovc.credits -= 1;
                if ovc.credits == 0 {
                    *self.op_credited.at_mut(op) &= !(1 << v);
                }
            }
            // The input VC feeding this output VC may have been waiting for room, which it
            // has now (with credits taken at the crossbar, it needs a credit too).
            let (no_credit, owner) = (taken && ovc.credits == 0, ovc.owner_input());
            if was_full && !no_credit {
                self.wake_feeder(r, port, v, owner);
            }
            debug_assert!(
                was_full || no_credit || !self.holds_feeder(port, v, owner),
                "router[{r}].out[{port}].vc[{v}]: feeder blocked on a buffer with room"
            );
            if HOOK && flit.is_head() && !flit.is_dummy() {
                let flow = net.packet(flit.packet()).flow;
                net.hop(now, flow, flit.packet(), Hop::Departed, r, port, v);
            }
            let to = *self.out.target.at(op);
            net.send_flit(now + self.p.d_output + *self.out.link.at(op), to, flit);
            *self.work.at_mut(r) -= 1;
            net.progress().flit_hops += 1;
            net.router_flit_sent(op);
            net.progress().last_progress = now;
        }
    }

    /// The flits in output VC `i`'s buffer (`Params::lane_index`) that took their downstream
    /// credit as they crossed (`CreditAt::Crossbar`; none otherwise): credits it holds, as
    /// the invariants count them.
    pub(crate) fn credits_taken(&self, i: usize) -> u32 {
        if self.p.credit_at_crossbar {
            self.out_vc.at(i).buf.len()
        } else {
            0
        }
    }

    /// Whether input VC `(oip, lane)`, the owner of output VC `v` of port `port`
    /// (`OutVc::owner_input`), is held waiting on it (`ip_blocked`: for room in its buffer
    /// or, with credits taken at the crossbar, a credit). The owner may have moved on to
    /// another packet and output VC, so it must still feed this one.
    #[inline(always)]
    fn holds_feeder(&self, port: usize, v: usize, (oip, lane): (usize, usize)) -> bool {
        let f = self.in_vc.at(self.p.lane_index(oip, lane));
        (f.out_port as usize, f.out_vc as usize) == (port, v) && *self.ip_blocked.at(oip) >> lane & 1 == 1
    }

    /// Output VC `v` of router `r`'s port `port`, owned by input VC `owner`, has room and
    /// (with credits taken at the crossbar) a credit again, one of them just now: its output
    /// stage sent a flit, or a credit came back (`credit_arrived`). The owner, if held
    /// waiting on it (`holds_feeder`), may cross again.
    #[inline(always)]
    pub(super) fn wake_feeder(&mut self, r: usize, port: usize, v: usize, owner: (usize, usize)) {
        if self.holds_feeder(port, v, owner) {
            let (oip, lane) = owner;
            *self.ip_blocked.at_mut(oip) &= !(1 << lane);
            *self.sa.r_ports.at_mut(r) |= 1 << (oip % self.p.ports);
        }
    }
}
