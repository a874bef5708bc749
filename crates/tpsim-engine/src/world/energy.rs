//! Energy glue: every radio state change settles the node's energy account and moves its
//! predicted death; at death the node's radio goes off for good.

use super::{Event, World};
use crate::energy::EnergyModel;
use tpsim_core::SimTime;

impl World {
    /// Applies a state change to node `node`'s energy account (if there is one) and
    /// reschedules its death.
    pub(super) fn energy_change(&mut self, node: u32, f: impl FnOnce(&mut EnergyModel, SimTime)) {
        let now = self.now;
        let Some(e) = &mut self.energy else { return };
        if e.dead(node as usize) {
            return;
        }
        f(e, now);
        let n = &mut e.nodes[node as usize];
        n.gen = n.gen.wrapping_add(1);
        let gen = n.gen;
        if let Some(t) = e.death_time(node as usize) {
            if t < self.end_run {
                self.queue.push(t.max(now), Event::EnergyDeath { node, gen });
            }
        }
    }

    /// Node `node`'s predicted death (generation `gen`) has come, unless superseded.
    pub(super) fn on_energy_death(&mut self, node: u32, gen: u32) {
        if self.energy.as_ref().is_none_or(|e| e.nodes[node as usize].gen != gen) {
            return;
        }
        if let Some(e) = &mut self.energy {
            e.kill(node as usize, self.now);
        }
        for r in self.rmap.radios(node).to_vec() {
            self.radio_off(r);
        }
    }

    /// Whether `node` has run out of energy.
    #[inline]
    pub(super) fn node_dead(&self, node: u32) -> bool {
        self.energy.as_ref().is_some_and(|e| e.dead(node as usize))
    }
}
