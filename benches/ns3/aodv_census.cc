// tpsim's own ns-3 program: a census of what ns-3's AODV scenarios transmit and where their
// data packets are lost, for the model comparisons in docs/benchmarks.md. It builds the
// scenarios of ../shared/ns3/s4_manet_cbr.cc (`--layout=s4`), s6_scale.cc (`--layout=s6`) and
// s1_manet_tcp.cc (`--layout=s1`) with the same helpers (the shared common.h: Wi-Fi, AODV,
// queues, TCP) and the same draws of node positions and flows, and prints one JSON line:
//   * AODV messages sent at the IP layer (every hop), by type and unicast/broadcast;
//     a HELLO is an RREP broadcast with TTL 1 (RFC 3561 §6.9); the RREQs their originators
//     send, by IP TTL;
//   * ARP frames and all PHY transmissions; MPDUs the MAC dropped, by reason;
//   * data packets (UDP, not port 654) originated and received, and dropped by IP (by
//     reason) and by ARP (at a lookup: its queue of packets waiting for a reply full, or the
//     neighbour dead; or held when the neighbour was declared dead).
// With `--layout=s1` it also follows the TCP connection: its segments (SYN, data, pure ACK)
// dropped by each cause, its state changes and retransmission timeouts, the bytes the sink
// received per 50 s, and the causes of the data segments lost after the last byte arrived
// (what ended the transfer). With `--layout=s4` it also lists the background flows it drew.
// `--movement FILE` writes the nodes' paths as an ns-2 movement file (tpsim runs them with
// mobility model "ns2"). `--verbose` prints on stderr every originated RREQ (destination, TTL),
// every AODV unicast sent (node, type, IP source and destination) and, with `--layout=s1`,
// every TCP segment's IP drop with the dropping node's AODV routes.
// Build and run: `python benches/ns3_census.py` (it uses compare_ns3's cached ns-3 wheel).
#include "common.h"
#include "ns3/llc-snap-header.h"
#include "ns3/wifi-mac-header.h"
#include "ns3/wifi-mpdu.h"

#include <fstream>
using namespace ns3;
using namespace reference;

namespace
{
constexpr uint16_t kAodvPort = 654;

// AODV messages: 0 RREQ, 1 RREP, 2 HELLO, 3 RERR, 4 RREP-ACK, 5 other; [unicast, broadcast].
uint64_t g_aodv[6][2] = {};
uint64_t g_arpFrames = 0, g_phyFrames = 0;
uint64_t g_rreqOriginated[65] = {}; // RREQs sent by their originators, by IP TTL
// MPDUs dropped by the MAC, by WifiMacDropReason (0..3), [data, other].
uint64_t g_macDrop[4][2] = {};
uint64_t g_dataSent = 0, g_dataReceived = 0;
// Data packets dropped by IP, by Ipv4L3Protocol::DropReason (1..7).
uint64_t g_ipDrop[8] = {};
uint64_t g_arpQueueDrop = 0, g_arpNoReply = 0;

// TCP segments: 0 SYN (or SYN-ACK), 1 data (payload > 0), 2 pure ACK (FIN, RST included).
constexpr int kTcpKinds = 3;
// Causes of a TCP segment's loss: IP drop reasons 1..7, then the ARP and MAC causes.
enum TcpCause
{
    kCauseArpQueueFull = 8,
    kCauseArpNoReply,
    kCauseMacRetry,
    kCauseMacQueue,
    kCauses
};
const char* kCauseNames[kCauses] = {"",         "ttl_expired",    "no_route",      "bad_checksum",
                                    "interface_down", "route_error", "fragment_timeout", "duplicate",
                                    "arp_queue_full", "arp_no_reply", "mac_retry_limit", "mac_queue"};
uint64_t g_tcpDrop[kCauses][kTcpKinds] = {};
uint64_t g_tcpSent[kTcpKinds] = {};
struct Loss
{
    double t;
    int cause;
    int kind;
};
std::vector<Loss> g_losses; // data segments and pure ACKs
uint64_t g_sinkBytes = 0;
double g_firstRx = -1, g_lastRx = -1;
std::vector<uint64_t> g_rxBins; // bytes received per 50 s
std::vector<std::pair<double, int>> g_states; // sender's TCP state changes (time, new state)
uint64_t g_rtoCount = 0, g_retransmissions = 0;
double g_rto = 0;      // the sender's RTO at the end, s
double g_gaveUp = -1;  // when the sender gave up (ns-3's DataRetries or ConnCount spent), s
// Times (s) of the sender's data segments, of their arrivals at the receiver's IP, of the pure
// ACKs the receiver sent, and of their arrivals at the sender's IP.
std::vector<double> g_senderTx, g_dataArrivals, g_acksSent, g_ackArrivals;
uint32_t g_receiverNode = 0;
Ipv4Address g_receiverAddr; // s1: the TCP receiver's address
// s4: the background flows drawn (source, destination, start s), printed so that tpsim can
// run the same flows on the same paths.
struct DrawnFlow
{
    uint32_t src, dst;
    double start;
};
std::vector<DrawnFlow> g_flows;
bool g_verbose = false; // --verbose: each TCP segment's drop by IP on stderr, with the route

// --verbose: the AODV routes of a node to `a` and `b` on stderr.
void
PrintRoutes(Ptr<Ipv4> ipv4, Ipv4Address a, Ipv4Address b)
{
    std::ostringstream table;
    ipv4->GetRoutingProtocol()->PrintRoutingTable(Create<OutputStreamWrapper>(&table), Time::S);
    std::istringstream lines(table.str());
    std::ostringstream as, bs;
    as << a << " ";
    bs << b << " ";
    for (std::string line; std::getline(lines, line);)
    {
        if (line.rfind(as.str(), 0) == 0 || line.rfind(bs.str(), 0) == 0)
        {
            std::cerr << "    " << line << "\n";
        }
    }
}

// --movement: every node's course changes (time s, position m, velocity m/s), to be written
// as an ns-2 movement file that tpsim reads (mobility model "ns2"), so that both simulators
// move the nodes along the same paths.
struct Course
{
    double t;
    Vector pos, vel;
};
std::vector<std::vector<Course>> g_courses;

void
OnCourseChange(uint32_t node, Ptr<const MobilityModel> m)
{
    g_courses[node].push_back({Simulator::Now().GetSeconds(), m->GetPosition(), m->GetVelocity()});
}

// Writes the courses as ns-2 `setdest` moves: each leg heads for where the next course change
// happens (the last leg for where it would be at `end`) at the leg's speed. Initial positions
// are `start`.
void
WriteMovement(const std::string& path, const std::vector<Vector>& start, double end)
{
    std::ofstream f(path);
    f << std::setprecision(17);
    f << "# ns-3 RandomWaypointMobilityModel paths, written by tpsim's benches/ns3/aodv_census.cc\n";
    for (size_t i = 0; i < start.size(); ++i)
    {
        f << "$node_(" << i << ") set X_ " << start[i].x << "\n$node_(" << i << ") set Y_ " << start[i].y
          << "\n$node_(" << i << ") set Z_ 0\n";
    }
    for (size_t i = 0; i < g_courses.size(); ++i)
    {
        const auto& c = g_courses[i];
        for (size_t k = 0; k < c.size(); ++k)
        {
            const double speed = std::hypot(c[k].vel.x, c[k].vel.y);
            if (speed == 0 || c[k].t >= end)
            {
                continue;
            }
            Vector to = k + 1 < c.size() ? c[k + 1].pos
                                         : Vector(c[k].pos.x + c[k].vel.x * (end - c[k].t),
                                                  c[k].pos.y + c[k].vel.y * (end - c[k].t), 0);
            f << "$ns_ at " << c[k].t << " \"$node_(" << i << ") setdest " << to.x << " " << to.y << " "
              << speed << "\"\n";
        }
    }
    if (!f)
    {
        NS_FATAL_ERROR("cannot write " << path);
    }
}

// The kind of a segment whose packet starts with its TCP header.
int
TcpKind(Ptr<Packet> c)
{
    TcpHeader th;
    c->RemoveHeader(th);
    if (th.GetFlags() & TcpHeader::SYN)
    {
        return 0;
    }
    return c->GetSize() > 0 ? 1 : 2;
}

// The kind of a TCP segment in an IPv4 packet that starts with its IP header, or -1.
int
TcpKindOfIp(Ptr<Packet> c)
{
    Ipv4Header ih;
    c->RemoveHeader(ih);
    return ih.GetProtocol() == 6 ? TcpKind(c) : -1;
}

void
CountTcpDrop(int kind, int cause)
{
    if (kind < 0)
    {
        return;
    }
    ++g_tcpDrop[cause][kind];
    if (kind > 0)
    {
        g_losses.push_back({Simulator::Now().GetSeconds(), cause, kind});
    }
}

// The UDP destination port of an IPv4 packet that starts with its IP header, or 0.
uint16_t
UdpPortOfIp(Ptr<Packet> c)
{
    Ipv4Header ih;
    c->RemoveHeader(ih);
    if (ih.GetProtocol() != 17)
    {
        return 0;
    }
    UdpHeader uh;
    c->PeekHeader(uh);
    return uh.GetDestinationPort();
}

bool
IsData(uint16_t port)
{
    return port != 0 && port != kAodvPort;
}

// An AODV message in an IPv4 packet that starts with its IP header: its IP header, the
// message (from its type byte on) and its type; false if the packet is not one.
bool
AodvMessage(Ptr<const Packet> p, Ipv4Header& ih, Ptr<Packet>& msg, uint8_t& type)
{
    msg = p->Copy();
    msg->RemoveHeader(ih);
    if (ih.GetProtocol() != 17)
    {
        return false;
    }
    UdpHeader uh;
    msg->RemoveHeader(uh);
    if (uh.GetDestinationPort() != kAodvPort)
    {
        return false;
    }
    type = 0;
    msg->CopyData(&type, 1);
    return true;
}

void
OnIpTx(Ptr<const Packet> p, Ptr<Ipv4> ipv4, uint32_t)
{
    Ipv4Header ih;
    Ptr<Packet> c;
    uint8_t type = 0;
    if (!AodvMessage(p, ih, c, type))
    {
        return;
    }
    const Ipv4Address d = ih.GetDestination();
    const bool bcast = d.IsBroadcast() || d.IsSubnetDirectedBroadcast(Ipv4Mask("255.0.0.0")) ||
                       d.IsSubnetDirectedBroadcast(Ipv4Mask("255.255.0.0"));
    int kind = 5;
    if (type >= 1 && type <= 4)
    {
        kind = type == 1 ? 0 : type == 2 ? ((bcast && ih.GetTtl() <= 1) ? 2 : 1) : type;
    }
    ++g_aodv[kind][bcast ? 1 : 0];
    if (g_verbose && !bcast)
    {
        std::cerr << Simulator::Now().GetSeconds() << " node " << ipv4->GetObject<Node>()->GetId()
                  << " aodv unicast type " << int(type) << " from "
                  << ih.GetSource() << " to " << ih.GetDestination() << " ttl " << int(ih.GetTtl()) << "\n";
    }
    uint8_t rreq[4] = {};
    if (type == 1 && c->CopyData(rreq, 4) == 4 && rreq[3] == 0)
    {
        // An RREQ with hop count 0 leaves its originator (RFC 3561 §5.1: byte 3): the first
        // try or a retry of a route discovery, by its IP TTL (the expanding ring).
        ++g_rreqOriginated[std::min<uint8_t>(ih.GetTtl(), 64)];
        if (g_verbose)
        {
            aodv::RreqHeader q;
            Ptr<Packet> r = c->Copy();
            aodv::TypeHeader th;
            r->RemoveHeader(th);
            r->RemoveHeader(q);
            std::cerr << Simulator::Now().GetSeconds() << " rreq from " << ih.GetSource() << " for " << q.GetDst()
                      << " ttl " << int(ih.GetTtl()) << "\n";
        }
    }
}

void
OnSendOutgoing(const Ipv4Header& h, Ptr<const Packet> p, uint32_t)
{
    if (h.GetProtocol() == 6)
    {
        const int kind = TcpKind(p->Copy());
        ++g_tcpSent[kind];
        if (kind == 2 && h.GetSource() == g_receiverAddr)
        {
            g_acksSent.push_back(Simulator::Now().GetSeconds());
            if (g_verbose)
            {
                std::cerr << Simulator::Now().GetSeconds() << " receiver sends an ACK\n";
                PrintRoutes(NodeList::GetNode(g_receiverNode)->GetObject<Ipv4>(), h.GetDestination(),
                            h.GetDestination());
            }
        }
        return;
    }
    if (h.GetProtocol() != 17)
    {
        return;
    }
    UdpHeader uh;
    p->PeekHeader(uh);
    if (IsData(uh.GetDestinationPort()))
    {
        ++g_dataSent;
    }
}

void
OnIpDrop(const Ipv4Header& h, Ptr<const Packet> p, Ipv4L3Protocol::DropReason r, Ptr<Ipv4> ipv4, uint32_t)
{
    if (h.GetProtocol() == 6 && r < 8)
    {
        const int kind = TcpKind(p->Copy());
        CountTcpDrop(kind, r);
        if (g_verbose)
        {
            std::cerr << Simulator::Now().GetSeconds() << " node " << ipv4->GetObject<Node>()->GetId()
                      << " drops tcp kind " << kind << " " << h.GetSource() << " -> " << h.GetDestination()
                      << " reason " << r << "\n";
            PrintRoutes(ipv4, h.GetDestination(), h.GetSource());
        }
        return;
    }
    if (h.GetProtocol() != 17)
    {
        return;
    }
    UdpHeader uh;
    p->PeekHeader(uh);
    if (IsData(uh.GetDestinationPort()) && r < 8)
    {
        ++g_ipDrop[r];
    }
}

// --verbose: the AODV messages the receiver gets (type, from).
void
OnReceiverRx(Ptr<const Packet> p, Ptr<Ipv4>, uint32_t)
{
    Ipv4Header ih;
    Ptr<Packet> c;
    uint8_t type = 0;
    if (!AodvMessage(p, ih, c, type))
    {
        return;
    }
    if (type == 2 && ih.GetTtl() <= 1 && ih.GetDestination().IsBroadcast())
    {
        return; // HELLO
    }
    std::cerr << Simulator::Now().GetSeconds() << " receiver gets AODV type " << int(type) << " from "
              << ih.GetSource() << " to " << ih.GetDestination() << "\n";
}

void
OnPhyTx(Ptr<const Packet> p, double)
{
    ++g_phyFrames;
    Ptr<Packet> c = p->Copy();
    WifiMacHeader mh;
    c->RemoveHeader(mh);
    if (!mh.IsData())
    {
        return;
    }
    LlcSnapHeader llc;
    c->RemoveHeader(llc);
    if (llc.GetType() == 0x0806)
    {
        ++g_arpFrames;
    }
}

void
OnMacDrop(WifiMacDropReason reason, Ptr<const WifiMpdu> mpdu)
{
    bool data = false;
    if (mpdu->GetHeader().IsData())
    {
        Ptr<Packet> c = mpdu->GetPacket()->Copy();
        LlcSnapHeader llc;
        c->RemoveHeader(llc);
        if (llc.GetType() == 0x0800)
        {
            CountTcpDrop(TcpKindOfIp(c->Copy()),
                         reason == WIFI_MAC_DROP_REACHED_RETRY_LIMIT ? kCauseMacRetry : kCauseMacQueue);
            data = IsData(UdpPortOfIp(c));
        }
    }
    if (reason < 4)
    {
        ++g_macDrop[reason][data ? 0 : 1];
    }
}

// Whether a packet that ARP dropped is an IPv4 packet of at least `minSize` bytes. ns-3 (3.44)
// adds the IPv4 header back before it fires either ARP drop trace for a held or refused packet
// ("for tracing purposes"), so such a packet starts with the IP header; the lookup trace also
// fires for ARP replies it ignores, which are not IP (what is left after the ARP header).
bool
ArpDroppedIp(Ptr<const Packet> p, uint32_t minSize)
{
    uint8_t first = 0;
    return p->GetSize() >= minSize && p->CopyData(&first, 1) == 1 && first == 0x45;
}

// Whether a packet that ARP dropped is a data packet (IP, then UDP to a data port).
bool
ArpHeldData(Ptr<const Packet> p)
{
    return ArpDroppedIp(p, 28) && IsData(UdpPortOfIp(p->Copy()));
}

// The kind of a TCP segment that ARP dropped (its IP header added back, as above), or -1.
int
ArpHeldTcp(Ptr<const Packet> p)
{
    return ArpDroppedIp(p, 40) ? TcpKindOfIp(p->Copy()) : -1;
}

void
OnArpQueueDrop(Ptr<const Packet> p)
{
    g_arpQueueDrop += ArpHeldData(p);
    CountTcpDrop(ArpHeldTcp(p), kCauseArpQueueFull);
}

void
OnArpNoReply(Ptr<const Packet> p)
{
    g_arpNoReply += ArpHeldData(p);
    CountTcpDrop(ArpHeldTcp(p), kCauseArpNoReply);
}

void
OnSinkRx(Ptr<const Packet> p, const Address&)
{
    ++g_dataReceived;
    const double t = Simulator::Now().GetSeconds();
    g_sinkBytes += p->GetSize();
    if (g_firstRx < 0)
    {
        g_firstRx = t;
    }
    g_lastRx = t;
    const size_t bin = size_t(t / 50);
    if (bin < g_rxBins.size())
    {
        g_rxBins[bin] += p->GetSize();
    }
}

void
OnTcpState(TcpSocket::TcpStates_t, TcpSocket::TcpStates_t to)
{
    g_states.emplace_back(Simulator::Now().GetSeconds(), int(to));
    // A connection that never opened gives up by going to CLOSED when its SYNs are spent
    // (TcpSocketBase::SendEmptyPacket); one that opened calls its error-close callback.
    if (to == TcpSocket::CLOSED && g_gaveUp < 0)
    {
        g_gaveUp = Simulator::Now().GetSeconds();
    }
}

void
OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t to)
{
    g_rtoCount += to == TcpSocketState::CA_LOSS;
}

void
OnRto(Time, Time to)
{
    g_rto = to.GetSeconds();
}

void
OnSenderTx(Ptr<const Packet> p, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    if (p->GetSize() > 0)
    {
        g_senderTx.push_back(Simulator::Now().GetSeconds());
    }
}

void
OnLocalDeliver(std::vector<double>* into, int kind, const Ipv4Header& h, Ptr<const Packet> p, uint32_t)
{
    if (h.GetProtocol() == 6 && TcpKind(p->Copy()) == kind)
    {
        into->push_back(Simulator::Now().GetSeconds());
    }
}

void
OnRetransmission(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&, Ptr<const TcpSocketBase>)
{
    ++g_retransmissions;
}

void
OnErrorClose(Ptr<Socket>)
{
    g_gaveUp = Simulator::Now().GetSeconds();
}

// The bulk sender's socket exists once its application has started.
void
WatchSender(Ptr<BulkSendApplication> app)
{
    Ptr<Socket> sock = app->GetSocket();
    if (!sock)
    {
        NS_FATAL_ERROR("the bulk sender has no socket after its start");
    }
    sock->TraceConnectWithoutContext("State", MakeCallback(&OnTcpState));
    sock->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
    sock->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetransmission));
    sock->TraceConnectWithoutContext("RTO", MakeCallback(&OnRto));
    sock->TraceConnectWithoutContext("Tx", MakeCallback(&OnSenderTx));
    // BulkSendApplication sets no close callbacks: the error close of a connection whose
    // DataRetries are spent (TcpSocketBase::ReTxTimeout) is seen here.
    sock->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(), MakeCallback(&OnErrorClose));
}

// How many of `times` are after `t`, and the last of them (-1 if none).
std::pair<size_t, double>
After(const std::vector<double>& times, double t)
{
    size_t k = 0;
    for (double x : times)
    {
        k += x > t;
    }
    return {k, times.empty() ? -1.0 : times.back()};
}

// As the shared MANET programs: nodes uniform in a `side` x `side` m square, moving by random
// waypoint (pause 0) with speeds drawn from `speed` (an ns-3 random variable string). The
// position allocator is made before the MobilityHelper, as there: the helper's constructor
// creates two random variables, and the other order would shift every random stream after them.
void
InstallRandomWaypoint(NodeContainer& nodes, double side, const std::string& speed)
{
    std::ostringstream xs;
    xs << "ns3::UniformRandomVariable[Min=0.0|Max=" << side << "]";
    ObjectFactory pf;
    pf.SetTypeId("ns3::RandomRectanglePositionAllocator");
    pf.Set("X", StringValue(xs.str()));
    pf.Set("Y", StringValue(xs.str()));
    Ptr<PositionAllocator> alloc = pf.Create()->GetObject<PositionAllocator>();
    MobilityHelper mob;
    mob.SetMobilityModel("ns3::RandomWaypointMobilityModel", "Speed", StringValue(speed), "Pause",
                         StringValue("ns3::ConstantRandomVariable[Constant=0]"), "PositionAllocator",
                         PointerValue(alloc));
    mob.SetPositionAllocator(alloc);
    mob.Install(nodes);
}

void
AddCbr(NodeContainer& nodes, Ipv4InterfaceContainer& ifs, uint32_t s, uint32_t d, uint16_t port,
       uint32_t size, double interval, double start, double stop)
{
    PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    sink.Install(nodes.Get(d)).Start(Seconds(0));
    auto app = CreateObject<PeriodicSender>();
    app->Setup(TypeId::LookupByName("ns3::UdpSocketFactory"), InetSocketAddress(ifs.GetAddress(d), port),
               size, Seconds(interval));
    nodes.Get(s)->AddApplication(app);
    app->SetStartTime(Seconds(start));
    app->SetStopTime(Seconds(stop));
}
} // namespace

int
main(int argc, char* argv[])
{
    std::string layout = "s4";
    uint32_t seed = 1, run = 1, bg = 8, n = 0;
    double speed = 10, simTime = 100;
    bool hello = true;
    CommandLine cmd(__FILE__);
    cmd.AddValue("layout", "s4 (50-node MANET, CBR), s6 (static grid) or s1 (50-node MANET, TCP)", layout);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.AddValue("run", "RNG run", run);
    cmd.AddValue("nodes", "s6: N (default 25); s4: 50", n);
    cmd.AddValue("speed", "s4: random waypoint speed, m/s (constant); s1: U[1, 2]", speed);
    cmd.AddValue("bg", "s4: background CBR flows", bg);
    cmd.AddValue("simTime", "simulated time, s", simTime);
    cmd.AddValue("hello", "AODV HELLO messages", hello);
    std::string movement;
    cmd.AddValue("movement", "s1, s4: write the nodes' paths to this ns-2 movement file", movement);
    cmd.AddValue("verbose", "print each TCP segment IP drops, with the dropping node's routes", g_verbose);
    cmd.Parse(argc, argv);
    SeedRng(seed, run);
    const bool grid = layout == "s6", tcp = layout == "s1";
    if (!grid && !tcp && layout != "s4")
    {
        NS_FATAL_ERROR("--layout must be s1, s4 or s6, not " << layout);
    }
    if (tcp)
    {
        SetupTcp(1340); // as s1_manet_tcp.cc
    }
    if (n == 0)
    {
        n = grid ? 25 : 50;
    }

    NodeContainer nodes;
    nodes.Create(n);
    // The helper is made where the shared programs make theirs: its constructor creates two
    // random variables, and creating them before the position allocator's would shift every
    // random stream after them.
    if (grid)
    {
        MobilityHelper mob;
        // As s6_scale.cc: 200 m spacing, ceil(sqrt(N)) columns, row first.
        const uint32_t cols = uint32_t(std::ceil(std::sqrt(double(n))));
        mob.SetPositionAllocator("ns3::GridPositionAllocator", "MinX", DoubleValue(0), "MinY",
                                 DoubleValue(0), "DeltaX", DoubleValue(200), "DeltaY", DoubleValue(200),
                                 "GridWidth", UintegerValue(cols), "LayoutType", StringValue("RowFirst"));
        mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
        mob.Install(nodes);
    }
    else if (tcp)
    {
        // As s1_manet_tcp.cc: uniform in 1500 x 1500 m, random waypoint at U[1, 2] m/s.
        InstallRandomWaypoint(nodes, 1500, "ns3::UniformRandomVariable[Min=1|Max=2]");
    }
    else
    {
        // As s4_manet_cbr.cc: uniform in 1000 x 1000 m, random waypoint at a constant speed.
        std::ostringstream spd;
        spd << "ns3::ConstantRandomVariable[Constant=" << speed << "]";
        InstallRandomWaypoint(nodes, 1000, spd.str());
    }

    WifiCfg wc;
    WifiOut w = InstallWifi(nodes, wc);
    InstallInternet(nodes, "aodv", hello);
    Ipv4AddressHelper addr;
    addr.SetBase(grid ? "10.0.0.0" : "10.1.0.0", grid ? "255.0.0.0" : "255.255.0.0");
    Ipv4InterfaceContainer ifs = addr.Assign(w.devs);
    RemoveQdiscs(w.devs);

    // Created where the shared programs create theirs (s4: after the main flow), so that it
    // gets the same random stream and draws the same flows.
    Ptr<UniformRandomVariable> pick;
    auto pair = [&](uint32_t& s, uint32_t& d) {
        s = pick->GetInteger(0, n - 1);
        do
        {
            d = pick->GetInteger(0, n - 1);
        } while (d == s);
    };
    if (tcp)
    {
        // As s1_manet_tcp.cc: TCP bulk 0 -> N-1 from 10 s, 1340-byte writes.
        g_receiverNode = n - 1;
        g_receiverAddr = ifs.GetAddress(n - 1);
        const uint16_t port = 5000;
        PacketSinkHelper sinkH("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        sinkH.Install(nodes.Get(n - 1)).Start(Seconds(0));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(n - 1), port));
        bulk.SetAttribute("SendSize", UintegerValue(1340));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer src = bulk.Install(nodes.Get(0));
        src.Start(Seconds(10));
        src.Stop(Seconds(simTime));
        Simulator::Schedule(Seconds(10) + NanoSeconds(1), &WatchSender,
                            DynamicCast<BulkSendApplication>(src.Get(0)));
        nodes.Get(n - 1)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "LocalDeliver", MakeBoundCallback(&OnLocalDeliver, &g_dataArrivals, 1));
        nodes.Get(0)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "LocalDeliver", MakeBoundCallback(&OnLocalDeliver, &g_ackArrivals, 2));
        if (g_verbose)
        {
            nodes.Get(n - 1)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
                "Rx", MakeCallback(&OnReceiverRx));
        }
        g_rxBins.assign(size_t(std::ceil(simTime / 50)), 0);
    }
    else if (grid)
    {
        // As s6_scale.cc: N/5 flows of 512 B at 4 packets/s, starts U[1, 11] s.
        pick = CreateObject<UniformRandomVariable>();
        for (uint32_t f = 0; f < std::max<uint32_t>(1, n / 5); ++f)
        {
            uint32_t s, d;
            pair(s, d);
            AddCbr(nodes, ifs, s, d, 1000 + f, 512, 0.25, pick->GetValue(1, 11), simTime);
        }
    }
    else
    {
        // As s4_manet_cbr.cc: 1000 B at 0.01 Mbit/s, 0 -> 49 from 10 s, plus `bg` random pairs.
        const double interval = 1000 * 8.0 / 0.01e6;
        AddCbr(nodes, ifs, 0, n - 1, 9, 1000, interval, 10.0, simTime);
        pick = CreateObject<UniformRandomVariable>();
        for (uint32_t f = 0; f < bg; ++f)
        {
            uint32_t s, d;
            pair(s, d);
            const double start = pick->GetValue(1, 10.0);
            AddCbr(nodes, ifs, s, d, 100 + f, 1000, interval, start, simTime);
            g_flows.push_back({s, d, start});
        }
    }

    for (uint32_t i = 0; i < n; ++i)
    {
        auto ip = nodes.Get(i)->GetObject<Ipv4L3Protocol>();
        ip->TraceConnectWithoutContext("Tx", MakeCallback(&OnIpTx));
        ip->TraceConnectWithoutContext("SendOutgoing", MakeCallback(&OnSendOutgoing));
        ip->TraceConnectWithoutContext("Drop", MakeCallback(&OnIpDrop));
    }
    Config::ConnectWithoutContext("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Phy/PhyTxBegin",
                                  MakeCallback(&OnPhyTx));
    Config::ConnectWithoutContext("/NodeList/*/DeviceList/*/$ns3::WifiNetDevice/Mac/DroppedMpdu",
                                  MakeCallback(&OnMacDrop));
    Config::ConnectWithoutContext("/NodeList/*/$ns3::ArpL3Protocol/Drop", MakeCallback(&OnArpQueueDrop));
    Config::ConnectWithoutContext("/NodeList/*/$ns3::Ipv4L3Protocol/InterfaceList/*/ArpCache/Drop",
                                  MakeCallback(&OnArpNoReply));
    Config::ConnectWithoutContext("/NodeList/*/ApplicationList/*/$ns3::PacketSink/Rx",
                                  MakeCallback(&OnSinkRx));

    std::vector<Vector> start;
    if (!movement.empty())
    {
        if (grid)
        {
            NS_FATAL_ERROR("--movement needs a layout whose nodes move (s1 or s4)");
        }
        g_courses.resize(n);
        for (uint32_t i = 0; i < n; ++i)
        {
            auto m = nodes.Get(i)->GetObject<MobilityModel>();
            start.push_back(m->GetPosition());
            m->TraceConnectWithoutContext("CourseChange", MakeBoundCallback(&OnCourseChange, i));
        }
    }

    Simulator::Stop(Seconds(simTime));
    Simulator::Run();
    if (!movement.empty())
    {
        WriteMovement(movement, start, simTime);
    }

    const char* kinds[6] = {"rreq", "rrep", "hello", "rerr", "rrep_ack", "other"};
    const char* macReasons[4] = {"failed_enqueue", "expired_lifetime", "retry_limit", "qos_old"};
    const char* ipReasons[8] = {"", "ttl_expired", "no_route", "bad_checksum", "interface_down",
                                "route_error", "fragment_timeout", "duplicate"};
    std::ostringstream o;
    o << "{\"layout\":\"" << layout << "\",\"nodes\":" << n << ",\"seed\":" << seed << ",\"speed\":" << speed
      << ",\"bg\":" << bg << ",\"sim_time\":" << simTime;
    for (int k = 0; k < 6; ++k)
    {
        o << ",\"aodv_" << kinds[k] << "_unicast\":" << g_aodv[k][0] << ",\"aodv_" << kinds[k]
          << "_broadcast\":" << g_aodv[k][1];
    }
    o << ",\"rreq_originated_by_ttl\":{";
    bool first = true;
    for (int t = 0; t <= 64; ++t)
    {
        if (g_rreqOriginated[t])
        {
            o << (first ? "" : ",") << "\"" << t << "\":" << g_rreqOriginated[t];
            first = false;
        }
    }
    o << "}";
    o << ",\"arp_frames\":" << g_arpFrames << ",\"phy_frames\":" << g_phyFrames;
    for (int r = 0; r < 4; ++r)
    {
        o << ",\"mac_drop_" << macReasons[r] << "_data\":" << g_macDrop[r][0] << ",\"mac_drop_"
          << macReasons[r] << "_other\":" << g_macDrop[r][1];
    }
    o << ",\"data_sent\":" << g_dataSent << ",\"data_received\":" << g_dataReceived;
    for (int r = 1; r < 8; ++r)
    {
        o << ",\"ip_drop_" << ipReasons[r] << "\":" << g_ipDrop[r];
    }
    o << ",\"arp_drop_queue_full\":" << g_arpQueueDrop << ",\"arp_drop_no_reply\":" << g_arpNoReply;
    if (!g_flows.empty())
    {
        o << ",\"flows\":[" << std::setprecision(17);
        for (size_t i = 0; i < g_flows.size(); ++i)
        {
            o << (i ? "," : "") << "[" << g_flows[i].src << "," << g_flows[i].dst << "," << g_flows[i].start << "]";
        }
        o << "]" << std::setprecision(6);
    }
    if (tcp)
    {
        const char* tcpKinds[kTcpKinds] = {"syn", "data", "ack"};
        for (int k = 0; k < kTcpKinds; ++k)
        {
            o << ",\"tcp_" << tcpKinds[k] << "_sent\":" << g_tcpSent[k];
            for (int c = 1; c < kCauses; ++c)
            {
                o << ",\"tcp_" << tcpKinds[k] << "_drop_" << kCauseNames[c] << "\":" << g_tcpDrop[c][k];
            }
        }
        // What ended the transfer: the causes of the data segments and ACKs lost after the
        // last byte the sink received.
        uint64_t tail[kCauses][kTcpKinds] = {};
        for (const auto& l : g_losses)
        {
            tail[l.cause][l.kind] += l.t > g_lastRx;
        }
        for (int k = 1; k < kTcpKinds; ++k)
        {
            for (int c = 1; c < kCauses; ++c)
            {
                o << ",\"tail_" << tcpKinds[k] << "_drop_" << kCauseNames[c] << "\":" << tail[c][k];
            }
        }
        o << ",\"sink_bytes\":" << g_sinkBytes << ",\"first_rx\":" << g_firstRx << ",\"last_rx\":" << g_lastRx
          << ",\"rtos\":" << g_rtoCount << ",\"retransmissions\":" << g_retransmissions << ",\"rto_end\":" << g_rto << ",\"gave_up_at\":" << g_gaveUp;
        // After the sink's last byte: the sender's data segments, their arrivals at the
        // receiver, the ACKs' arrivals at the sender (counts, and the last time of each).
        const char* names[4] = {"sender_tx", "data_arrivals", "acks_sent", "ack_arrivals"};
        const std::vector<double>* series[4] = {&g_senderTx, &g_dataArrivals, &g_acksSent, &g_ackArrivals};
        for (int i = 0; i < 4; ++i)
        {
            const auto [k, last] = After(*series[i], g_lastRx);
            o << ",\"" << names[i] << "_after_last_rx\":" << k << ",\"" << names[i] << "_last\":" << last;
        }
        o << ",\"rx_bins\":[";
        for (size_t b = 0; b < g_rxBins.size(); ++b)
        {
            o << (b ? "," : "") << g_rxBins[b];
        }
        o << "],\"states\":[";
        for (size_t i = 0; i < g_states.size(); ++i)
        {
            o << (i ? "," : "") << "[" << g_states[i].first << "," << g_states[i].second << "]";
        }
        o << "]";
    }
    o << "}";
    std::cout << o.str() << std::endl;
    Simulator::Destroy();
    return 0;
}
