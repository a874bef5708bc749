//! Transport endpoints as the world holds them: each [`Socket`] (any transport) with its
//! addresses, the flow directions it sends and receives, its one pending deadline, and, for
//! byte-stream transports, the application's message boundaries.
//!
//! Endpoints come in pairs: `2k` at flow `k`'s source, `2k + 1` at its destination.

use std::collections::VecDeque;
use std::net::Ipv4Addr;
use tpsim_core::SimTime;
use tpsim_transport::Transport as _;
use tpsim_transport::{Message, Segment, Socket};

struct Endpoint {
    addressing: Addressing,
    socket: Socket,
    /// Direction whose data this endpoint receives (`NO_DIR`: none).
    rx_dir: u32,
    timer_gen: u32,
    timer_at: SimTime,
    /// A bulk generator feeding this endpoint whenever its send buffer has room.
    bulk_gen: Option<u32>,
    /// Streams the application spreads its messages over (round-robin by message id), and
    /// whether they are unordered; transports without streams ignore both.
    streams: u16,
    unordered: bool,
}

/// Message boundaries of a byte-stream direction: the transport reports only stream offsets,
/// so the world maps them back to the application's messages (for delays, and for which
/// messages count as delivered).
#[derive(Default)]
struct StreamTrack {
    /// Messages written and not yet delivered, in stream order.
    pending: VecDeque<PendingMsg>,
    /// Stream bytes written by the application so far.
    written: u64,
    /// Stream bytes below this offset have been transmitted at least once.
    sent_upto: u64,
    /// Index in `pending` of the first message whose first byte has not been sent yet.
    unsent: usize,
}

struct PendingMsg {
    start: u64,
    end: u64,
    msg: Message,
    first_tx: SimTime,
}

/// Where an endpoint is and what it sends: what a caller needs to build its packets.
#[derive(Clone, Copy, Debug)]
pub struct Addressing {
    /// The endpoint's node.
    pub node: u32,
    /// Its own IPv4 address.
    pub local: Ipv4Addr,
    /// The peer's address.
    pub remote: Ipv4Addr,
    /// The direction whose data the endpoint sends (`NO_DIR`: none).
    pub tx_dir: u32,
}

/// Every transport endpoint of a run, and the byte-stream tracking of every flow direction.
#[derive(Default)]
pub struct Sockets {
    eps: Vec<Endpoint>,
    /// Per flow direction: its message boundaries if its transport is a byte stream.
    streams: Vec<Option<StreamTrack>>,
}

impl Sockets {
    /// Adds an endpoint at `addressing` running `socket` that receives direction `rx_dir`
    /// (`NO_DIR`: none). Returns its index.
    pub fn add(&mut self, addressing: Addressing, socket: Socket, rx_dir: u32) -> u32 {
        self.eps.push(Endpoint {
            addressing,
            socket,
            rx_dir,
            timer_gen: 0,
            timer_at: SimTime::NEVER,
            bulk_gen: None,
            streams: 1,
            unordered: false,
        });
        self.eps.len() as u32 - 1
    }

    /// Declares flow direction `dir` (directions are numbered from 0 in order), tracking
    /// message boundaries if it is carried by a byte stream.
    pub fn add_direction(&mut self, dir: u32, byte_stream: bool) {
        debug_assert_eq!(dir as usize, self.streams.len());
        self.streams.push(byte_stream.then(StreamTrack::default));
    }

    /// Endpoint `ep`'s socket.
    #[inline]
    pub fn socket(&self, ep: u32) -> &Socket {
        &self.eps[ep as usize].socket
    }

    /// Endpoint `ep`'s socket, to drive it.
    #[inline]
    pub fn socket_mut(&mut self, ep: u32) -> &mut Socket {
        &mut self.eps[ep as usize].socket
    }

    /// Endpoint `ep`'s addresses and sending direction.
    #[inline]
    pub fn addressing(&self, ep: u32) -> Addressing {
        self.eps[ep as usize].addressing
    }

    /// The direction endpoint `ep` receives.
    #[inline]
    pub fn rx_dir(&self, ep: u32) -> u32 {
        self.eps[ep as usize].rx_dir
    }

    /// The endpoint at the other end of `ep`'s flow.
    #[inline]
    pub fn peer(ep: u32) -> u32 {
        ep ^ 1
    }

    /// Sets the streams endpoint `ep`'s application spreads its messages over.
    pub fn set_streams(&mut self, ep: u32, streams: u16, unordered: bool) {
        let e = &mut self.eps[ep as usize];
        e.streams = streams.max(1);
        e.unordered = unordered;
    }

    /// The stream (round-robin over the endpoint's streams by message id) and the unordered
    /// flag for message `id` written at `ep`.
    #[inline]
    pub fn stream_of(&self, ep: u32, id: u64) -> (u16, bool) {
        let e = &self.eps[ep as usize];
        ((id % e.streams as u64) as u16, e.unordered)
    }

    /// Lets bulk generator `gen` feed endpoint `ep`.
    pub fn set_bulk(&mut self, ep: u32, gen: u32) {
        self.eps[ep as usize].bulk_gen = Some(gen);
    }

    /// The bulk generator feeding `ep`, if any.
    #[inline]
    pub fn bulk_gen(&self, ep: u32) -> Option<u32> {
        self.eps[ep as usize].bulk_gen
    }

    /// `ep`'s socket wants to run at `t`: the generation of the timer event to queue, or
    /// `None` if that deadline is already queued.
    #[inline]
    pub fn arm_timer(&mut self, ep: u32, t: SimTime) -> Option<u32> {
        let e = &mut self.eps[ep as usize];
        if t == e.timer_at {
            return None;
        }
        e.timer_gen = e.timer_gen.wrapping_add(1);
        e.timer_at = t;
        Some(e.timer_gen)
    }

    /// `ep`'s timer event of generation `gen` fired: whether it is the current one.
    #[inline]
    pub fn fire_timer(&mut self, ep: u32, gen: u32) -> bool {
        let e = &mut self.eps[ep as usize];
        if e.timer_gen != gen {
            return false;
        }
        e.timer_at = SimTime::NEVER;
        true
    }

    /// The application wrote `msg` on direction `dir` (accepted by the transport).
    pub fn note_write(&mut self, dir: u32, msg: Message) {
        if let Some(st) = &mut self.streams[dir as usize] {
            let start = st.written;
            st.written += msg.len as u64;
            st.pending.push_back(PendingMsg {
                start,
                end: st.written,
                msg,
                first_tx: SimTime::NEVER,
            });
        }
    }

    /// Segment `seg` of direction `dir` goes out at `now`: marks when each message's first
    /// byte is first put on the network (for `net_delay`).
    pub fn note_transmit(&mut self, dir: u32, seg: &Segment, now: SimTime) {
        let (Some(st), Some(data)) = (&mut self.streams[dir as usize], seg.stream) else {
            return;
        };
        let upto = data.offset + data.len as u64;
        if upto <= st.sent_upto {
            return;
        }
        st.sent_upto = upto;
        while let Some(m) = st.pending.get_mut(st.unsent) {
            if m.start >= upto {
                break;
            }
            m.first_tx = now;
            st.unsent += 1;
        }
    }

    /// The receiver of byte-stream direction `dir` has every byte below `upto`: the next
    /// message that this completes, with when its first byte was first sent (`now` if never
    /// noted). Call until `None`.
    pub fn pop_delivered(&mut self, dir: u32, upto: u64, now: SimTime) -> Option<(Message, SimTime)> {
        let st = self.streams[dir as usize].as_mut()?;
        if st.pending.front().is_none_or(|m| m.end > upto) {
            return None;
        }
        let m = st.pending.pop_front().expect("front");
        st.unsent = st.unsent.saturating_sub(1);
        let first_tx = if m.first_tx == SimTime::NEVER { now } else { m.first_tx };
        Some((m.msg, first_tx))
    }

    /// Messages of direction `dir`, sent through endpoint `ep`, that the application wrote and
    /// whose first byte never left the sender.
    pub fn buffered_messages(&self, dir: u32, ep: u32) -> u64 {
        match &self.streams[dir as usize] {
            Some(st) => (st.pending.len() - st.unsent.min(st.pending.len())) as u64,
            None => self.socket(ep).buffered_messages(),
        }
    }
}
