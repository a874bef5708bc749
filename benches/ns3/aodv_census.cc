// tpsim's own ns-3 program: a census of what ns-3's AODV scenarios transmit and where their
// data packets are lost, for the model comparisons in docs/benchmarks.md. It builds the
// scenarios of ../shared/ns3/s4_manet_cbr.cc (`--layout=s4`) and s6_scale.cc (`--layout=s6`)
// with the same helpers (the shared common.h: Wi-Fi, AODV, queues) and the same draws of node
// positions and flows, and prints one JSON line:
//   * AODV messages sent at the IP layer (every hop), by type and unicast/broadcast;
//     a HELLO is an RREP broadcast with TTL 1 (RFC 3561 §6.9);
//   * ARP frames and all PHY transmissions; MPDUs the MAC dropped, by reason;
//   * data packets (UDP, not port 654) originated and received, and dropped by IP (by
//     reason) and by ARP (at a lookup: its queue of packets waiting for a reply full, or the
//     neighbour dead; or held when the neighbour was declared dead).
// Build and run: `python benches/ns3_census.py` (it uses compare_ns3's cached ns-3 wheel).
#include "common.h"
#include "ns3/llc-snap-header.h"
#include "ns3/wifi-mac-header.h"
#include "ns3/wifi-mpdu.h"
using namespace ns3;
using namespace reference;

namespace
{
constexpr uint16_t kAodvPort = 654;

// AODV messages: 0 RREQ, 1 RREP, 2 HELLO, 3 RERR, 4 RREP-ACK, 5 other; [unicast, broadcast].
uint64_t g_aodv[6][2] = {};
uint64_t g_arpFrames = 0, g_phyFrames = 0;
// MPDUs dropped by the MAC, by WifiMacDropReason (0..3), [data, other].
uint64_t g_macDrop[4][2] = {};
uint64_t g_dataSent = 0, g_dataReceived = 0;
// Data packets dropped by IP, by Ipv4L3Protocol::DropReason (1..7).
uint64_t g_ipDrop[8] = {};
uint64_t g_arpQueueDrop = 0, g_arpNoReply = 0;

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

void
OnIpTx(Ptr<const Packet> p, Ptr<Ipv4>, uint32_t)
{
    Ptr<Packet> c = p->Copy();
    Ipv4Header ih;
    c->RemoveHeader(ih);
    if (ih.GetProtocol() != 17)
    {
        return;
    }
    UdpHeader uh;
    c->RemoveHeader(uh);
    if (uh.GetDestinationPort() != kAodvPort)
    {
        return;
    }
    uint8_t type = 0;
    c->CopyData(&type, 1);
    const Ipv4Address d = ih.GetDestination();
    const bool bcast = d.IsBroadcast() || d.IsSubnetDirectedBroadcast(Ipv4Mask("255.0.0.0")) ||
                       d.IsSubnetDirectedBroadcast(Ipv4Mask("255.255.0.0"));
    int kind = 5;
    if (type >= 1 && type <= 4)
    {
        kind = type == 1 ? 0 : type == 2 ? ((bcast && ih.GetTtl() <= 1) ? 2 : 1) : type;
    }
    ++g_aodv[kind][bcast ? 1 : 0];
}

void
OnSendOutgoing(const Ipv4Header& h, Ptr<const Packet> p, uint32_t)
{
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
OnIpDrop(const Ipv4Header& h, Ptr<const Packet> p, Ipv4L3Protocol::DropReason r, Ptr<Ipv4>, uint32_t)
{
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
        data = llc.GetType() == 0x0800 && IsData(UdpPortOfIp(c));
    }
    if (reason < 4)
    {
        ++g_macDrop[reason][data ? 0 : 1];
    }
}

// Whether a packet that ARP dropped is a data packet. ns-3 (3.44) adds the IPv4 header back
// before it fires either ARP drop trace for a held or refused packet ("for tracing
// purposes"), so such a packet starts with the IP header, then UDP; the lookup trace also
// fires for ARP replies it ignores, which are not IP (what is left after the ARP header).
bool
ArpHeldData(Ptr<const Packet> p)
{
    uint8_t first = 0;
    if (p->GetSize() < 28 || p->CopyData(&first, 1) != 1 || first != 0x45)
    {
        return false;
    }
    return IsData(UdpPortOfIp(p->Copy()));
}

void
OnArpQueueDrop(Ptr<const Packet> p)
{
    g_arpQueueDrop += ArpHeldData(p);
}

void
OnArpNoReply(Ptr<const Packet> p)
{
    g_arpNoReply += ArpHeldData(p);
}

void
OnSinkRx(Ptr<const Packet>, const Address&)
{
    ++g_dataReceived;
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
    cmd.AddValue("layout", "s4 (50-node MANET) or s6 (static grid)", layout);
    cmd.AddValue("seed", "RNG seed", seed);
    cmd.AddValue("run", "RNG run", run);
    cmd.AddValue("nodes", "s6: N (default 25); s4: 50", n);
    cmd.AddValue("speed", "s4: random waypoint speed, m/s (constant)", speed);
    cmd.AddValue("bg", "s4: background CBR flows", bg);
    cmd.AddValue("simTime", "simulated time, s", simTime);
    cmd.AddValue("hello", "AODV HELLO messages", hello);
    cmd.Parse(argc, argv);
    SeedRng(seed, run);
    const bool grid = layout == "s6";
    if (!grid && layout != "s4")
    {
        NS_FATAL_ERROR("--layout must be s4 or s6, not " << layout);
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
    else
    {
        // As s4_manet_cbr.cc: uniform in 1000 x 1000 m, random waypoint at a constant speed.
        std::ostringstream spd;
        spd << "ns3::ConstantRandomVariable[Constant=" << speed << "]";
        ObjectFactory pf;
        pf.SetTypeId("ns3::RandomRectanglePositionAllocator");
        pf.Set("X", StringValue("ns3::UniformRandomVariable[Min=0.0|Max=1000]"));
        pf.Set("Y", StringValue("ns3::UniformRandomVariable[Min=0.0|Max=1000]"));
        Ptr<PositionAllocator> alloc = pf.Create()->GetObject<PositionAllocator>();
        MobilityHelper mob;
        mob.SetMobilityModel("ns3::RandomWaypointMobilityModel", "Speed", StringValue(spd.str()),
                             "Pause", StringValue("ns3::ConstantRandomVariable[Constant=0]"),
                             "PositionAllocator", PointerValue(alloc));
        mob.SetPositionAllocator(alloc);
        mob.Install(nodes);
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
    if (grid)
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
            AddCbr(nodes, ifs, s, d, 100 + f, 1000, interval, pick->GetValue(1, 10.0), simTime);
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

    Simulator::Stop(Seconds(simTime));
    Simulator::Run();

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
    o << ",\"arp_drop_queue_full\":" << g_arpQueueDrop << ",\"arp_drop_no_reply\":" << g_arpNoReply << "}";
    std::cout << o.str() << std::endl;
    Simulator::Destroy();
    return 0;
}
