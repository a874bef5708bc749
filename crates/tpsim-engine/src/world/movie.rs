//! Movie glue: the hops, drops and deliveries the network movie counts go to its trace
//! ([`crate::movie`]); with `[output] animation` off each hook is one branch.

use super::World;
use crate::metrics::DropReason;
use crate::packet::PacketId;
use crate::table::Table;

impl World {
    /// Packet `id` sent by `from` was received by `to`.
    #[inline]
    pub(super) fn movie_hop(&mut self, from: u32, to: u32, id: PacketId) {
        if let Some(m) = &mut self.movie {
            m.hop(self.now, from, to, self.packets.get(id));
        }
    }

    /// Node `node` drops packet `id` for `reason`.
    #[inline]
    pub(super) fn movie_drop(&mut self, node: u32, id: PacketId, reason: DropReason) {
        if let Some(m) = &mut self.movie {
            m.drop(self.now, node, self.packets.get(id), reason);
        }
    }

    /// Packet `id` arrived at its destination transport for the first time.
    #[inline]
    pub(super) fn movie_delivered(&mut self, id: PacketId) {
        if let Some(m) = &mut self.movie {
            m.delivered(self.now, self.packets.get(id));
        }
    }

    /// The movie's table at the end of the run, if it is kept.
    pub(super) fn movie_table(&mut self) -> Option<Table> {
        let metrics = &self.metrics;
        let keys: Vec<_> = (0..metrics.directions()).map(|d| metrics.key(d)).collect();
        let energy = self.energy.as_ref();
        self.movie.as_mut().map(|m| m.table(&keys, energy))
    }
}
