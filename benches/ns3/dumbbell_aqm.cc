// tpsim's own ns-3 program: the queue-discipline dumbbell of the cross-check in
// benches/compare_ns3.py (scenario group `dumbbell_aqm`; the tpsim side is
// benches/scenarios/dumbbell-aqm.toml). It is compiled against the ns-3.44 wheel with the helpers
// of the shared reference folder (common.h: Json, TimedRun, FlowStatsJson, SeedRng), found
// with -I../shared/ns3, and prints one JSON line.
//
// Topology: node 0 --- node 1, one full-duplex point-to-point link, 10 Mbit/s, 20 ms one way,
// MTU 1500 B, PPP framing (2 B). Bulk TCP flows 0 -> 1 (BulkSendHelper, unlimited, writes of
// one segment), the first from 0.1 s, the second (--flows=2) from 0.2 s, to sinks on ports 9 and
// 10 of node 1. The run ends at --simTime (60 s).
//
// Queues. The traffic-control layer's root queue disc on each device is the discipline under
// test (--qdisc, installed with TrafficControlHelper before the addresses, so that no default
// qdisc is installed), over the point-to-point device's own DropTailQueue of 1 packet (ns-3's
// usual arrangement for AQM studies: with flow control the qdisc hands the device one packet
// at a time, so under load one packet waits in the device queue while another is on the wire,
// and the qdisc holds the rest). Each discipline keeps its ns-3.44 defaults except:
//   droptail  FifoQueueDisc   MaxSize = --limit packets (default 1000p)
//   red       RedQueueDisc    MaxSize = --limit packets (default 25p), LinkBandwidth = the link
//                             rate and LinkDelay = the link delay (defaults 1.5 Mbit/s, 20 ms:
//                             the rate sets the decay of the average over idle time);
//                             kept: MinTh 5, MaxTh 15, QW 0.002, LInterm 50 (max_p 0.02),
//                             MeanPktSize 500, IdlePktSize 0, Gentle, Wait, UseHardDrop, packet
//                             mode, Ns1Compat false (--redNs1Compat=1 restarts the count after a
//                             forced drop)
//   codel     CoDelQueueDisc  MaxSize = --limit packets (default 1500000 B = 1000 packets of
//                             1500 B); kept: Target 5 ms, Interval 100 ms, MinBytes 1500
//   fqcodel   FqCoDelQueueDisc MaxSize = --limit packets (default 10240p), UseEcn = --ecn
//                             (default true); kept: Flows 1024, Target 5 ms, Interval 100 ms,
//                             DropBatchSize 64, Perturbation 0, quantum = the device MTU 1500 B
//   pie       PieQueueDisc    MaxSize = --limit packets (default 25p); kept: QueueDelayReference
//                             15 ms, Tupdate 15 ms, A 0.125, B 1.25, MaxBurstAllowance 150 ms,
//                             timestamps (UseDequeueRateEstimator false), UseCapDropAdjustment,
//                             no derandomization, MarkEcnThreshold 0.1
// --ecn=1 sets the qdisc's UseEcn and TcpSocketBase::UseEcn=On (classic ECN: ECT(0) on new data
// segments only).
//
// TCP, the same on both ends (ns-3 defaults unless marked *):
//   congestion control --cc: TcpCubic (* HyStart off: tpsim has none; FastConvergence, Beta 0.7,
//     C 0.4, TcpFriendliness kept), TcpNewReno, or (scenario group `dumbbell_cc`):
//     bbr           TcpBbr (BBR v1) with its ns-3.44 attributes: HighGain 2.89 (STARTUP pacing and
//                   cwnd gain; DRAIN paces at 1/2.89), BwWindowLength 10 rounds, RttWindowLength
//                   10 s, ProbeRttDuration 200 ms, ExtraAckedRttWindowLength 5 rounds,
//                   AckEpochAckedResetThresh 4096 B, Stream 4 (the random start of the PROBE_BW
//                   gain cycle); fixed in the code: PROBE_BW cwnd gain 2, pacing gains 5/4, 3/4,
//                   then six of 1; PROBE_RTT cwnd 4 segments; pacing rate 1 % below gain x
//                   bandwidth. It controls cwnd itself (TcpCongestionOps::CongControl from
//                   TcpRateLinux's delivery-rate samples), so the recovery algorithm's
//                   EnterRecovery/DoRecovery are not called for it: on entering recovery
//                   cwnd = bytes in flight + max(bytes newly ACKed or SACKed, 1 segment), then
//                   packet conservation for one round; ssthresh is never lowered on a loss
//                   (it stays the in-flight target set when DRAIN began), and on leaving fast
//                   recovery TcpSocketBase sets cwnd = ssthresh before TcpBbr's own update of
//                   the same ACK.
//                   * Pacing: TcpSocketState::EnablePacing = true (TcpBbr switches it on itself
//                   when the connection opens, with a log warning, if it is off; ns-3's default
//                   is off). Kept: PaceInitialWindow false (the first 10 segments, up to
//                   HighTxMark = initial window, leave unpaced), MaxPacingRate 4 Gbit/s. A
//                   paced socket sends one segment, then waits payload bytes x 8 / pacing rate
//                   (the 1448 payload bytes only, no headers) before the next.
//     vegas         TcpVegas, * Alpha 2, Beta 4, Gamma 1 (set explicitly; they are its
//                   defaults); pacing off
//     westwoodplus  TcpWestwoodPlus (ns-3.44 has no TcpWestwood any more: Westwood+ is its own
//                   TypeId ns3::TcpWestwoodPlus), FilterType Tustin (its default); pacing off
//   * loss recovery TcpClassicRecovery (--recovery=prr for ns-3's default PRR): cwnd = ssthresh on
//     entering recovery and, with SACK, sending while the scoreboard's pipe is below cwnd, as
//     RFC 6675 (tpsim's SACK recovery)
//   * LimitedTransmit false (tpsim has no limited transmit; --limitedTransmit=1 for ns-3's default)
//   * SegmentSize 1448 B (1448 + 20 TCP + 12 timestamp option + 20 IP = 1500 B, 1502 B on the wire)
//   InitialCwnd 10 segments, initial ssthresh unlimited, DelAckCount 2, DelAckTimeout 200 ms,
//   SACK on (--sack=0 for a check without it), timestamps on, window scaling on, TcpNoDelay,
//   ReTxThreshold 3, MinRto 1 s, ClockGranularity 1 ms, ConnTimeout 3 s
//   * SndBufSize = RcvBufSize = 4 MiB (never the limit: 10 Mbit/s x 40 ms is 50 kB)
// Not settable, and different from tpsim: TcpCubic's slow start adds the segments acknowledged
// (2 MSS per delayed ACK), tpsim's CUBIC 1 MSS per ACK; TcpNewReno adds 1 MSS per ACK in slow
// start and MSS*MSS/cwnd per ACK in congestion avoidance, as tpsim. ssthresh after a loss:
// TcpCubic Beta * cwnd, TcpNewReno BytesInFlight / 2 (the scoreboard's pipe); tpsim
// beta * (SND.MAX - SND.UNA). TcpVegas and TcpWestwoodPlus grow as TcpNewReno (1 MSS per ACK in
// slow start) and are handed the smoothed RTT, not the sample, on every ACK (PktsAcked);
// ssthresh after a loss: TcpVegas max(min(ssthresh, cwnd - 1 MSS), 2 MSS), TcpWestwoodPlus
// max(2 MSS, estimated bandwidth x the connection's minimum smoothed RTT).
//
// Measures (forward direction, node 0's device, over the whole run):
//   * wait_mean_s: per packet transmitted, time from its enqueue in the qdisc to the start of its
//     transmission (qdisc + device queue), the mean over the packets transmitted;
//     qdisc_sojourn_mean_s: the qdisc part only (enqueue -> dequeue), over the same packets.
//   * qdisc_len_mean, devq_len_mean: time averages of the packets in the qdisc and in the device
//     queue (the packet on the wire is in neither).
//   * qdisc statistics: packets enqueued, dropped before enqueue / after dequeue (by reason),
//     marked (by reason); drops in each second of the run.
//   * per second of the run: packets transmitted and their summed qdisc sojourns and waits, and the
//     sinks' bytes at each whole second (for measures that leave out the start-up).
//   * retransmissions: TcpSocketBase "Retransmission" trace of the senders.
//   * mean RTT of the data flows (rtt_mean_s overall, flow_rtt_mean_s per flow, with the sample
//     counts and each flow's smallest sample): the mean of every RTT sample the senders take,
//     i.e. every Time a sender socket hands to its RTT estimator (RttEstimator::Measurement; the
//     program installs on node 0 an RttMeanDeviation that also sums them, so the estimate the
//     socket uses is unchanged). TcpSocketBase takes one sample per arriving ACK that
//     acknowledges at least the oldest segment still timed (its RTT history), duplicate ACKs
//     never; with timestamps the sample is now - the echoed TSval (so the ACK of a retransmitted
//     segment is sampled too, unless a retransmission timeout has emptied the history), in whole
//     milliseconds because ns-3's TSval clock counts ms (each sample is floor(now in ms) -
//     floor(send time in ms)). The receiver echoes the TSval of the earliest segment it has not
//     yet acknowledged (RFC 7323), so with delayed ACKs a sample includes the wait for the second
//     segment. The handshake's SYN -> SYN-ACK sample counts too (one per flow; it is the 40-ms
//     flow_rtt_min_s). ns-3's "RTT" trace source is the smoothed RTT and "LastRTT" fires only
//     when the value changes, so neither gives every sample.
//   * per-flow application bytes at the sinks and goodput = bytes * 8 / (simTime - flow start).
//   * FlowMonitor (both nodes): one-way IP delay of the data packets, packets sent and received.
//   * with --sample=S (a diagnostic, off by default): every S seconds the senders' cwnd and the
//     qdisc's packets.
//   * the first flow's sender (node 0's socket 0, traces connected when the last flow has
//     started), time-weighted means from 5 s to the end of the run (the value before the
//     first change seen is that change's old value; null when there is nothing to average):
//     cwnd_mean_bytes_from5s        TcpSocketBase "CongestionWindow" (TcpSocketState's cWnd)
//     pacing_rate_mean_bps_from5s   TcpSocketBase "PacingRate" (TcpSocketState's pacing rate,
//                                   bit/s of payload: see Pacing above); null unless the socket
//                                   paces (--cc=bbr)
//     and, with --cc=bbr, TcpBbr's own state (null otherwise):
//     bbr_pacing_gain_mean_from5s   TcpBbr "PacingGain" trace source
//     bbr_min_rtt_mean_s_from5s     TcpBbr "MinRtt" trace source (its RTprop estimate)
//     bbr_state_s_from5s            seconds from 5 s in each BbrMode_t (STARTUP, DRAIN, PROBE_BW,
//                                   PROBE_RTT): TcpBbr::GetBbrState() of the socket's
//                                   "CongestionOps" object, read on every change of its
//                                   "PacingGain" or "CwndGain" (each change of mode changes one
//                                   of the two)
//     bbr_btlbw_mean_bps_from5s     the bottleneck-bandwidth estimate BtlBw (the best of the
//                                   max-bandwidth filter). ns-3.44 does not expose it (the filter
//                                   is private to TcpBbr: no trace source, attribute or getter),
//                                   so it is derived: once the pipe is filled, TcpBbr sets the
//                                   pacing rate on every ACK to gain x BtlBw x (1 - 0.01), so
//                                   BtlBw = PacingRate / (0.99 x PacingGain), re-evaluated on
//                                   every change of either (valid from 5 s: STARTUP, where the
//                                   pacing rate only grows, ends well before).
#include "common.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <map>
#include <unordered_map>

using namespace ns3;
using namespace reference;

namespace
{

// Time-weighted mean of a packet count that a TracedValue reports on every change.
struct TimeAverage
{
    double area = 0;   // packet-seconds
    double last = 0;   // time of the last change, s
    uint32_t value = 0;

    void Set(uint32_t v)
    {
        double now = Simulator::Now().GetSeconds();
        area += value * (now - last);
        last = now;
        value = v;
    }

    double Mean(double until)
    {
        Set(value);
        return until > 0 ? area / until : 0;
    }
};

TimeAverage g_qdiscLen, g_devLen;

//! Start of the "from 5 s" means, s.
constexpr double kSteadyFrom = 5.0;

// Time-weighted mean from kSteadyFrom of a value that a trace reports on every change (old
// value, new value). Before the first report the value is that report's old value, from the
// instant the trace was connected (Connected()).
struct StepMean
{
    double area = 0; // value-seconds from kSteadyFrom
    double span = 0; // seconds from kSteadyFrom with a known value
    double last = 0; // time the area runs to, s
    double value = 0;
    bool known = false;

    void Connected()
    {
        last = Simulator::Now().GetSeconds();
    }

    void Advance()
    {
        double now = Simulator::Now().GetSeconds();
        double a = std::max(last, kSteadyFrom);
        if (known && now > a)
        {
            area += value * (now - a);
            span += now - a;
        }
        last = now;
    }

    void Set(double v)
    {
        Advance();
        value = v;
        known = true;
    }

    void Change(double oldV, double newV)
    {
        if (!known)
        {
            value = oldV;
            known = true;
        }
        Set(newV);
    }

    // The mean up to now, as JSON (null without a known value from kSteadyFrom on).
    std::string Json()
    {
        Advance();
        if (span <= 0)
        {
            return "null";
        }
        std::ostringstream s;
        s << std::setprecision(10) << area / span;
        return s.str();
    }
};

// The first flow's sender: cwnd and pacing rate; with BBR its gains, RTprop, mode and the
// derived BtlBw (see the header).
StepMean g_cwnd0, g_pacing0, g_pacingGain0, g_minRtt0, g_btlBw0;
Ptr<TcpBbr> g_bbr0;
double g_rate0 = -1, g_gain0 = -1; // current pacing rate (bit/s) and pacing gain (-1: unknown)
uint32_t g_bbrMode0 = 0;
double g_bbrModeSince0 = 0;
double g_bbrModeTime0[4] = {0, 0, 0, 0}; // s from kSteadyFrom in each BbrMode_t

// RTT samples of one sender socket.
struct RttSamples
{
    double sum = 0; // s
    uint64_t count = 0;
    double min = 0; // s (0 while there is no sample)
};

// One entry per RTT estimator created on node 0, i.e. per sender socket, in the order the
// sockets were created (the flows' start order).
std::vector<RttSamples> g_rtt;

// ns-3's default RTT estimator (RFC 6298 gains) that also keeps the sum and count of the samples
// it is given. TcpSocketBase passes it every RTT sample it takes (EstimateRtt), so the sum over
// these is the sum over the sender's samples; the estimate itself is the parent's, unchanged.
class SampleSummingRtt : public RttMeanDeviation
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("tpsim::SampleSummingRtt")
                                .SetParent<RttMeanDeviation>()
                                .SetGroupName("Internet")
                                .AddConstructor<SampleSummingRtt>();
        return tid;
    }

    SampleSummingRtt()
        : m_slot(g_rtt.size())
    {
        g_rtt.emplace_back();
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    void Measurement(Time t) override
    {
        RttSamples& r = g_rtt[m_slot];
        double v = t.GetSeconds();
        r.min = r.count ? std::min(r.min, v) : v;
        r.sum += v;
        r.count++;
        RttMeanDeviation::Measurement(t);
    }

    Ptr<RttEstimator> Copy() const override
    {
        return CopyObject<SampleSummingRtt>(this);
    }

  private:
    size_t m_slot; // index in g_rtt (a copy, as of a forked socket, adds to the same entry)
};

struct Stamp
{
    Time enq;
    Time deq;
};

// Packets of node 0's qdisc by packet uid (the qdisc item's packet is the one the device sends,
// with the IP and PPP headers added).
std::unordered_map<uint64_t, Stamp> g_inFlight;
double g_waitSum = 0, g_sojournSum = 0;
uint64_t g_txPackets = 0, g_untracked = 0;
uint64_t g_retx = 0;
std::vector<uint32_t> g_dropsPerSecond; // qdisc drops of node 0 in each second of the run
// Per second of the run: packets node 0 transmitted and the sums of their qdisc sojourns and waits.
std::vector<uint32_t> g_txPerSecond;
std::vector<double> g_sojournPerSecond, g_waitPerSecond;
uint32_t g_cwnd[2] = {0, 0};           // the senders' cwnd, bytes (socket 0 and 1 of node 0)
std::ostringstream g_samples;          // --sample: [t, cwnd0, cwnd1, qdisc packets] rows

void
OnEnqueue(Ptr<const QueueDiscItem> item)
{
    g_inFlight[item->GetPacket()->GetUid()] = Stamp{Simulator::Now(), Time(0)};
}

void
OnDequeue(Ptr<const QueueDiscItem> item)
{
    auto it = g_inFlight.find(item->GetPacket()->GetUid());
    if (it != g_inFlight.end())
    {
        it->second.deq = Simulator::Now();
    }
}

void
OnDrop(Ptr<const QueueDiscItem> item)
{
    g_inFlight.erase(item->GetPacket()->GetUid());
    auto sec = static_cast<size_t>(Simulator::Now().GetSeconds());
    if (sec < g_dropsPerSecond.size())
    {
        g_dropsPerSecond[sec]++;
    }
}

void
OnTxBegin(Ptr<const Packet> p)
{
    auto it = g_inFlight.find(p->GetUid());
    if (it == g_inFlight.end())
    {
        g_untracked++;
        return;
    }
    Time now = Simulator::Now();
    double wait = (now - it->second.enq).GetSeconds();
    double sojourn = (it->second.deq - it->second.enq).GetSeconds();
    g_waitSum += wait;
    g_sojournSum += sojourn;
    g_txPackets++;
    auto sec = static_cast<size_t>(now.GetSeconds());
    if (sec < g_txPerSecond.size())
    {
        g_txPerSecond[sec]++;
        g_sojournPerSecond[sec] += sojourn;
        g_waitPerSecond[sec] += wait;
    }
    g_inFlight.erase(it);
}

void
OnQdiscLen(uint32_t, uint32_t v)
{
    g_qdiscLen.Set(v);
}

void
OnDevLen(uint32_t, uint32_t v)
{
    g_devLen.Set(v);
}

void
OnRetransmission(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                 Ptr<const TcpSocketBase>)
{
    g_retx++;
}

void
OnCwnd(std::string context, uint32_t, uint32_t v)
{
    // context: /NodeList/0/$ns3::TcpL4Protocol/SocketList/<i>/CongestionWindow
    auto a = context.find("SocketList/");
    uint32_t i = a == std::string::npos ? 0 : std::stoul(context.substr(a + 11));
    if (i < 2)
    {
        g_cwnd[i] = v;
    }
}

// The BBR mode of the first sender: the time spent in the current one is added up to now.
void
AdvanceBbrMode0()
{
    double now = Simulator::Now().GetSeconds();
    double a = std::max(g_bbrModeSince0, kSteadyFrom);
    if (now > a && g_bbrMode0 < 4)
    {
        g_bbrModeTime0[g_bbrMode0] += now - a;
    }
    g_bbrModeSince0 = now;
    if (g_bbr0)
    {
        g_bbrMode0 = g_bbr0->GetBbrState();
    }
}

// BtlBw = pacing rate / (0.99 x pacing gain), on a change of either.
void
UpdateBtlBw0()
{
    if (g_rate0 >= 0 && g_gain0 > 0)
    {
        g_btlBw0.Set(g_rate0 / (0.99 * g_gain0));
    }
}

void
OnCwnd0(uint32_t oldV, uint32_t newV)
{
    g_cwnd0.Change(oldV, newV);
}

void
OnPacingRate0(DataRate oldV, DataRate newV)
{
    g_pacing0.Change(oldV.GetBitRate(), newV.GetBitRate());
    g_rate0 = newV.GetBitRate();
    UpdateBtlBw0();
}

void
OnPacingGain0(double oldV, double newV)
{
    g_pacingGain0.Change(oldV, newV);
    g_gain0 = newV;
    UpdateBtlBw0();
    AdvanceBbrMode0();
}

void
OnCwndGain0(double, double)
{
    AdvanceBbrMode0();
}

void
OnMinRtt0(Time oldV, Time newV)
{
    // Time::Max() until the first RTT sample (the handshake's, at the connection's opening).
    g_minRtt0.Change(oldV == Time::Max() ? newV.GetSeconds() : oldV.GetSeconds(), newV.GetSeconds());
}

// The first flow's sender socket (node 0's socket 0) and, with BBR, its TcpBbr.
void
ConnectFirstSender(bool paced)
{
    auto m = Config::LookupMatches("/NodeList/0/$ns3::TcpL4Protocol/SocketList/0");
    if (m.GetN() == 0)
    {
        return;
    }
    Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(m.Get(0));
    if (!sock)
    {
        return;
    }
    sock->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd0));
    g_cwnd0.Connected();
    if (paced)
    {
        sock->TraceConnectWithoutContext("PacingRate", MakeCallback(&OnPacingRate0));
        g_pacing0.Connected();
    }
    PointerValue ops;
    sock->GetAttribute("CongestionOps", ops);
    g_bbr0 = ops.Get<TcpBbr>();
    if (g_bbr0)
    {
        g_bbr0->TraceConnectWithoutContext("PacingGain", MakeCallback(&OnPacingGain0));
        g_bbr0->TraceConnectWithoutContext("CwndGain", MakeCallback(&OnCwndGain0));
        g_bbr0->TraceConnectWithoutContext("MinRtt", MakeCallback(&OnMinRtt0));
        g_pacingGain0.Set(g_bbr0->GetPacingGain());
        g_gain0 = g_bbr0->GetPacingGain();
        g_minRtt0.Connected();
        g_btlBw0.Connected();
        g_bbrMode0 = g_bbr0->GetBbrState();
        g_bbrModeSince0 = Simulator::Now().GetSeconds();
    }
}

void
ConnectSenders(bool paced)
{
    Config::ConnectWithoutContext("/NodeList/0/$ns3::TcpL4Protocol/SocketList/*/Retransmission",
                                  MakeCallback(&OnRetransmission));
    Config::Connect("/NodeList/0/$ns3::TcpL4Protocol/SocketList/*/CongestionWindow",
                    MakeCallback(&OnCwnd));
    ConnectFirstSender(paced);
}

void
Sample(double every)
{
    g_samples << (g_samples.tellp() > 0 ? "," : "") << '[' << Simulator::Now().GetSeconds() << ','
              << g_cwnd[0] << ',' << g_cwnd[1] << ',' << g_qdiscLen.value << ']';
    Simulator::Schedule(Seconds(every), &Sample, every);
}

// The sinks' bytes at each whole second (index i: bytes received by i s).
std::vector<std::vector<uint64_t>> g_sinkBytesAt;

void
SampleSinks(ApplicationContainer sinks)
{
    std::vector<uint64_t> b;
    for (uint32_t i = 0; i < sinks.GetN(); ++i)
    {
        b.push_back(DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx());
    }
    g_sinkBytesAt.push_back(b);
    Simulator::Schedule(Seconds(1), &SampleSinks, sinks);
}

template <typename T>
std::string
Array(const std::vector<T>& v)
{
    std::ostringstream s;
    s << std::setprecision(10) << '[';
    for (size_t i = 0; i < v.size(); ++i)
    {
        s << (i ? "," : "") << v[i];
    }
    s << ']';
    return s.str();
}

std::string
ReasonMap(const std::map<std::string, uint32_t, std::less<>>& m)
{
    std::ostringstream s;
    s << '{';
    bool first = true;
    for (const auto& [k, v] : m)
    {
        s << (first ? "" : ",") << '"' << k << "\":" << v;
        first = false;
    }
    s << '}';
    return s.str();
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string qdisc = "codel", cc = "cubic", rate = "10Mbps", delay = "20ms", recovery = "classic";
    uint32_t seed = 1, run = 1, flows = 1, limit = 0, devQueue = 1, segSize = 1448;
    double simTime = 60, start = 0.1, start2 = 0.2, sample = 0;
    bool ecn = false, hystart = false, limitedTransmit = false, redNs1Compat = false, sack = true;
    CommandLine cmd(__FILE__);
    cmd.AddValue("qdisc", "droptail|red|codel|fqcodel|pie", qdisc);
    cmd.AddValue("limit", "qdisc MaxSize, packets (0: the discipline's ns-3 default)", limit);
    cmd.AddValue("ecn", "qdisc UseEcn and TcpSocketBase::UseEcn=On", ecn);
    cmd.AddValue("cc", "cubic|newreno|bbr|vegas|westwoodplus", cc);
    cmd.AddValue("flows", "bulk flows 0 -> 1 (1 or 2)", flows);
    cmd.AddValue("simTime", "simulated time (s)", simTime);
    cmd.AddValue("start", "start of the first flow (s)", start);
    cmd.AddValue("start2", "start of the second flow (s)", start2);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.AddValue("run", "RNG run number", run);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("delay", "link delay (one way)", delay);
    cmd.AddValue("devQueue", "point-to-point device queue, packets", devQueue);
    cmd.AddValue("segSize", "TCP segment size (B)", segSize);
    cmd.AddValue("recovery", "classic|prr (ns-3's default)", recovery);
    cmd.AddValue("hystart", "TcpCubic HyStart (ns-3's default: on)", hystart);
    cmd.AddValue("limitedTransmit", "TcpSocketBase::LimitedTransmit (ns-3's default: on)", limitedTransmit);
    cmd.AddValue("sack", "TcpSocketBase::Sack", sack);
    cmd.AddValue("sample", "every this many s, record [t, cwnd0, cwnd1, qdisc packets] (0: off)", sample);
    cmd.AddValue("redNs1Compat", "RedQueueDisc::Ns1Compat (restart the count after a forced drop)", redNs1Compat);
    cmd.Parse(argc, argv);
    if (flows < 1 || flows > 2)
    {
        std::cerr << "--flows must be 1 or 2\n";
        return 2;
    }
    SeedRng(seed, run);
    auto seconds = static_cast<size_t>(std::ceil(simTime));
    g_dropsPerSecond.assign(seconds, 0);
    g_txPerSecond.assign(seconds, 0);
    g_sojournPerSecond.assign(seconds, 0);
    g_waitPerSecond.assign(seconds, 0);

    // TCP
    const std::map<std::string, TypeId> ccTypes = {
        {"cubic", TcpCubic::GetTypeId()},
        {"newreno", TcpNewReno::GetTypeId()},
        {"bbr", TcpBbr::GetTypeId()},
        {"vegas", TcpVegas::GetTypeId()},
        {"westwoodplus", TcpWestwoodPlus::GetTypeId()},
    };
    auto ccType = ccTypes.find(cc);
    if (ccType == ccTypes.end())
    {
        std::cerr << "unknown --cc " << cc << "\n";
        return 2;
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(ccType->second));
    // TcpBbr needs pacing (it switches it on itself when the connection opens if it is off).
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(cc == "bbr"));
    Config::SetDefault("ns3::TcpVegas::Alpha", UintegerValue(2));
    Config::SetDefault("ns3::TcpVegas::Beta", UintegerValue(4));
    Config::SetDefault("ns3::TcpVegas::Gamma", UintegerValue(1));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                     : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(hystart));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(ecn ? "On" : "Off"));

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    std::ostringstream dq;
    dq << devQueue << "p";
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue(dq.str()));
    NetDeviceContainer devs = p2p.Install(nodes);
    InternetStackHelper stack;
    stack.Install(nodes);
    // The senders' sockets (node 0) sum their RTT samples; the receivers keep the plain estimator.
    nodes.Get(0)->GetObject<TcpL4Protocol>()->SetAttribute(
        "RttEstimatorType", TypeIdValue(SampleSummingRtt::GetTypeId()));

    TrafficControlHelper tch;
    std::ostringstream lim;
    lim << limit << "p";
    if (qdisc == "droptail")
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc");
    }
    else if (qdisc == "red")
    {
        tch.SetRootQueueDisc("ns3::RedQueueDisc", "LinkBandwidth", StringValue(rate), "LinkDelay",
                             StringValue(delay), "UseEcn", BooleanValue(ecn), "Ns1Compat",
                             BooleanValue(redNs1Compat));
    }
    else if (qdisc == "codel")
    {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc", "UseEcn", BooleanValue(ecn));
    }
    else if (qdisc == "fqcodel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "UseEcn", BooleanValue(ecn));
    }
    else if (qdisc == "pie")
    {
        tch.SetRootQueueDisc("ns3::PieQueueDisc", "UseEcn", BooleanValue(ecn));
    }
    else
    {
        std::cerr << "unknown --qdisc " << qdisc << "\n";
        return 2;
    }
    QueueDiscContainer qdiscs = tch.Install(devs);
    if (limit > 0)
    {
        for (uint32_t i = 0; i < qdiscs.GetN(); ++i)
        {
            qdiscs.Get(i)->SetMaxSize(QueueSize(lim.str()));
        }
    }
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addr.Assign(devs);

    // Traces at the bottleneck: node 0's qdisc and device.
    Ptr<QueueDisc> q0 = qdiscs.Get(0);
    q0->TraceConnectWithoutContext("Enqueue", MakeCallback(&OnEnqueue));
    q0->TraceConnectWithoutContext("Dequeue", MakeCallback(&OnDequeue));
    q0->TraceConnectWithoutContext("Drop", MakeCallback(&OnDrop));
    q0->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnQdiscLen));
    auto dev0 = DynamicCast<PointToPointNetDevice>(devs.Get(0));
    dev0->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnTxBegin));
    dev0->GetQueue()->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&OnDevLen));

    // Applications
    std::vector<double> starts = {start, start2};
    ApplicationContainer sinks;
    for (uint32_t f = 0; f < flows; ++f)
    {
        uint16_t port = 9 + f;
        PacketSinkHelper sh("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        sinks.Add(sh.Install(nodes.Get(1)));
        BulkSendHelper bs("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
        bs.SetAttribute("MaxBytes", UintegerValue(0));
        bs.SetAttribute("SendSize", UintegerValue(segSize));
        ApplicationContainer a = bs.Install(nodes.Get(0));
        a.Start(Seconds(starts[f]));
        a.Stop(Seconds(simTime));
    }
    sinks.Start(Seconds(0));
    Simulator::Schedule(Seconds(0), &SampleSinks, sinks);
    Simulator::Schedule(Seconds(std::max(start, flows > 1 ? start2 : start) + 0.001), &ConnectSenders,
                        cc == "bbr");

    if (sample > 0)
    {
        Simulator::Schedule(Seconds(sample), &Sample, sample);
    }
    FlowMonitorHelper fmh;
    Ptr<FlowMonitor> mon = fmh.InstallAll();
    RunInfo r = TimedRun(simTime);

    const QueueDisc::Stats& st = q0->GetStats();
    std::ostringstream perFlow, goodputs;
    perFlow << '[';
    goodputs << '[';
    double goodputSum = 0;
    uint64_t rxSum = 0;
    for (uint32_t f = 0; f < flows; ++f)
    {
        uint64_t b = DynamicCast<PacketSink>(sinks.Get(f))->GetTotalRx();
        double g = b * 8.0 / 1000.0 / (simTime - starts[f]);
        rxSum += b;
        goodputSum += g;
        perFlow << (f ? "," : "") << b;
        goodputs << (f ? "," : "") << g;
    }
    perFlow << ']';
    goodputs << ']';
    std::vector<uint64_t> sinkAt; // all sinks' bytes at 0, 1, ..., simTime s
    for (const auto& b : g_sinkBytesAt)
    {
        uint64_t t = 0;
        for (auto x : b)
        {
            t += x;
        }
        sinkAt.push_back(t);
    }
    while (sinkAt.size() <= g_dropsPerSecond.size())
    {
        sinkAt.push_back(rxSum); // the sample at simTime itself runs after Stop
    }
    uint32_t fqClasses = qdisc == "fqcodel" ? q0->GetNQueueDiscClasses() : 0;
    // RTT samples of the data flows (one estimator per sender socket, in start order).
    std::vector<double> rttMean, rttMin;
    std::vector<uint64_t> rttCount;
    double rttSum = 0;
    uint64_t rttN = 0;
    for (const auto& r : g_rtt)
    {
        rttMean.push_back(r.count ? r.sum / r.count : 0);
        rttMin.push_back(r.min);
        rttCount.push_back(r.count);
        rttSum += r.sum;
        rttN += r.count;
    }

    Json j;
    j.ks("scenario", "dumbbell-aqm").ks("qdisc", qdisc).ks("cc", cc).kv("flows", flows)
        .kv("ecn", ecn ? 1 : 0).kv("limit", q0->GetMaxSize().GetValue()).ks("recovery", recovery).kv("sack", sack ? 1 : 0)
        .kv("pacing", cc == "bbr" ? 1 : 0)
        .kv("seed", seed).kv("run", run).kv("sim_time", simTime);
    AddRunInfo(j, r, simTime);
    j.kv("app_rx_bytes", rxSum)
        .raw("flow_rx_bytes", perFlow.str())
        .raw("flow_goodput_kbps", goodputs.str())
        .kv("goodput_kbps", goodputSum)
        .kv("tx_packets_fwd", g_txPackets)
        .kv("untracked_tx", g_untracked)
        .kv("wait_mean_s", g_txPackets ? g_waitSum / g_txPackets : 0)
        .kv("qdisc_sojourn_mean_s", g_txPackets ? g_sojournSum / g_txPackets : 0)
        .kv("qdisc_len_mean", g_qdiscLen.Mean(simTime))
        .kv("devq_len_mean", g_devLen.Mean(simTime))
        .kv("qdisc_enqueued", st.nTotalEnqueuedPackets)
        .kv("qdisc_drops", st.nTotalDroppedPackets)
        .kv("qdisc_drops_before_enqueue", st.nTotalDroppedPacketsBeforeEnqueue)
        .kv("qdisc_drops_after_dequeue", st.nTotalDroppedPacketsAfterDequeue)
        .raw("qdisc_drops_per_s", Array(g_dropsPerSecond))
        .raw("tx_per_s", Array(g_txPerSecond))
        .raw("sojourn_sum_per_s", Array(g_sojournPerSecond))
        .raw("wait_sum_per_s", Array(g_waitPerSecond))
        .raw("sink_bytes_at_s", Array(sinkAt))
        .kv("qdisc_marks", st.nTotalMarkedPackets)
        .raw("qdisc_drop_reasons_enqueue", ReasonMap(st.nDroppedPacketsBeforeEnqueue))
        .raw("qdisc_drop_reasons_dequeue", ReasonMap(st.nDroppedPacketsAfterDequeue))
        .raw("qdisc_mark_reasons", ReasonMap(st.nMarkedPackets))
        .kv("fq_classes", fqClasses)
        .kv("retransmissions", g_retx)
        .kv("rtt_mean_s", rttN ? rttSum / rttN : 0)
        .kv("rtt_samples", rttN)
        .raw("flow_rtt_mean_s", Array(rttMean))
        .raw("flow_rtt_samples", Array(rttCount))
        .raw("flow_rtt_min_s", Array(rttMin))
        .raw("flowmon", FlowStatsJson(mon, fmh, {9, 10}))
        .raw("cwnd_mean_bytes_from5s", g_cwnd0.Json())
        .raw("pacing_rate_mean_bps_from5s", g_pacing0.Json());
    if (g_bbr0)
    {
        AdvanceBbrMode0();
        std::ostringstream modes;
        modes << std::setprecision(10) << '{';
        for (uint32_t i = 0; i < 4; ++i)
        {
            modes << (i ? "," : "") << '"' << std::string(TcpBbr::BbrModeName[i]).substr(4)
                  << "\":" << g_bbrModeTime0[i];
        }
        modes << '}';
        j.raw("bbr_pacing_gain_mean_from5s", g_pacingGain0.Json())
            .raw("bbr_min_rtt_mean_s_from5s", g_minRtt0.Json())
            .raw("bbr_btlbw_mean_bps_from5s", g_btlBw0.Json())
            .raw("bbr_state_s_from5s", modes.str());
    }
    else
    {
        j.raw("bbr_pacing_gain_mean_from5s", "null")
            .raw("bbr_min_rtt_mean_s_from5s", "null")
            .raw("bbr_btlbw_mean_bps_from5s", "null")
            .raw("bbr_state_s_from5s", "null");
    }
    if (sample > 0)
    {
        j.raw("samples", "[" + g_samples.str() + "]");
    }
    std::cout << j.str() << std::endl;
    Simulator::Destroy();
    return 0;
}
