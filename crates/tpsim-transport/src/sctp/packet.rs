//! [`SctpBox`]: an SCTP packet description on the heap whose allocation is reused.
//!
//! An [`SctpRepr`] is 440 bytes (room for [`MAX_DATA_CHUNKS`](tpsim_wire::sctp::MAX_DATA_CHUNKS)
//! DATA chunks), too large to travel inline in every [`Segment`](crate::Segment), so SCTP packets
//! are boxed. A box is taken from a small per-thread pool of boxes whose packets were dropped and
//! goes back to it when its packet is dropped (the box dropped last waits in a one-box slot in
//! front of the pool): a packet then costs neither an allocation nor a
//! copy of the whole description (emptying a reused one rewrites its header and chunk counts
//! only). Nothing observable depends on the pool: a box's previous content is never seen.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::ops::{Deref, DerefMut};
use tpsim_wire::{IpProtocol, Ipv4Repr, SctpRepr};

use crate::Header;

/// Boxes kept for reuse per thread; more than this many free at once are released.
const POOL_MAX: usize = 64;

thread_local! {
    // The boxes themselves are what is reused: they are handed out whole.
    #[allow(clippy::vec_box)]
    static POOL: RefCell<Vec<Box<SctpRepr>>> = const { RefCell::new(Vec::new()) };
    // The box dropped last, in front of the pool (the top of the same stack): a packet that is
    // dropped before the next is built, the common case, never touches the pool.
    static SPARE: Cell<Option<Box<SctpRepr>>> = const { Cell::new(None) };
}

/// A boxed [`SctpRepr`] (dereferences to it), as [`L4Header::Sctp`](crate::L4Header::Sctp)
/// carries it.
pub struct SctpBox(Option<Box<SctpRepr>>);

impl SctpBox {
    /// A packet with no chunks yet (as [`SctpRepr::new`]).
    #[inline(always)]
    pub fn empty(src_port: u16, dst_port: u16, verification_tag: u32) -> SctpBox {
        let reused = match SPARE.try_with(Cell::take) {
            Ok(None) => POOL.try_with(|p| p.try_borrow_mut().ok().and_then(|mut v| v.pop())),
            spare => spare,
        };
        match reused {
            Ok(Some(mut b)) => {
                b.src_port = src_port;
                b.dst_port = dst_port;
                b.verification_tag = verification_tag;
                b.control = None;
                b.sack = None;
                b.data.clear();
                SctpBox(Some(b))
            }
            _ => SctpBox(Some(Box::new(SctpRepr::new(src_port, dst_port, verification_tag)))),
        }
    }

    /// `r`, boxed.
    pub fn new(r: SctpRepr) -> SctpBox {
        let mut b = SctpBox::empty(r.src_port, r.dst_port, r.verification_tag);
        *b = r;
        b
    }
}

impl Drop for SctpBox {
    #[inline]
    fn drop(&mut self) {
        if let Some(b) = self.0.take() {
            // The spare box; the one it held back to the pool if there is room (else, or while
            // the thread ends, released).
            if let Ok(Some(older)) = SPARE.try_with(|c| c.replace(Some(b))) {
                let _ = POOL.try_with(move |p| {
                    if let Ok(mut v) = p.try_borrow_mut() {
                        if v.len() < POOL_MAX {
                            v.push(older);
                        }
                    }
                });
            }
        }
    }
}

impl Deref for SctpBox {
    type Target = SctpRepr;
    #[inline]
    fn deref(&self) -> &SctpRepr {
        self.0.as_deref().expect("present until dropped")
    }
}

impl DerefMut for SctpBox {
    #[inline]
    fn deref_mut(&mut self) -> &mut SctpRepr {
        self.0.as_deref_mut().expect("present until dropped")
    }
}

impl From<SctpRepr> for SctpBox {
    fn from(r: SctpRepr) -> SctpBox {
        SctpBox::new(r)
    }
}

impl Clone for SctpBox {
    fn clone(&self) -> SctpBox {
        SctpBox::new(**self)
    }
}

impl PartialEq for SctpBox {
    fn eq(&self, o: &SctpBox) -> bool {
        **self == **o
    }
}

impl Eq for SctpBox {}

impl fmt::Debug for SctpBox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl Header for SctpBox {
    fn protocol(&self) -> IpProtocol {
        IpProtocol::Sctp
    }
    fn src_port(&self) -> u16 {
        self.src_port
    }
    fn dst_port(&self) -> u16 {
        self.dst_port
    }
    /// SCTP has no pseudo-header; its CRC32c covers the whole packet (RFC 9260 §6.8). A
    /// length other than the real packet's (the `ns2` size convention) writes the real packet
    /// if it fits, zeros after it, and nothing otherwise.
    fn emit_zeroed(&self, _ip: &Ipv4Repr, out: &mut [u8]) {
        if out.len() >= self.packet_len() as usize {
            out.fill(0);
            self.emit(out);
        }
    }
    /// ns-2.35's Agent/SCTP gives every packet, data or control, the type `sctp`.
    fn ns2_type(&self, _data: bool) -> &'static str {
        "sctp"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpsim_wire::sctp::{ControlChunk, DataChunk, DataFlags, SackChunk};

    /// A reused box shows nothing of the packet it held before.
    #[test]
    fn reused_box_is_empty() {
        let mut a = SctpBox::empty(1, 2, 3);
        a.control = Some(ControlChunk::CookieAck);
        a.sack = Some(SackChunk::new(5, 6));
        a.data.push(DataChunk {
            flags: DataFlags::WHOLE,
            tsn: 9,
            len: 100,
            ..DataChunk::default()
        });
        drop(a);
        let b = SctpBox::empty(7, 8, 9);
        assert_eq!(*b, SctpRepr::new(7, 8, 9));
        assert_eq!(b.packet_len(), 12);
        assert_eq!(format!("{b:?}"), format!("{:?}", SctpRepr::new(7, 8, 9)));
        let c = b.clone();
        assert_eq!(c, b);
    }
}
