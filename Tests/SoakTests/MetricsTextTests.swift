import Soak
import Testing

@Suite("Metrics text: the relay's Prometheus exposition read for the soak's counters")
struct MetricsTextTests {
    let exposition = """
        # HELP blipscope_messages_total Complete BLIP messages.
        # TYPE blipscope_messages_total counter
        blipscope_messages_total{direction="c2u",type="MSG",profile="other"} 1500
        blipscope_messages_total{direction="u2c",type="RPY",profile="other"} 1500
        blipscope_messages_total{direction="u2c",type="MSG",profile="rev"} 300
        blipscope_decode_failures_total{direction="c2u",kind="crc"} 2
        blipscope_sessions_total{database="soak",subprotocol="BLIP_3+CBMobile_3"} 40
        blipscope_sessions_closed_total{database="soak",close_reason="client_normal"} 38
        blipscope_sessions_closed_total{database="soakdb",close_reason="client_normal"} 1
        blipscope_sessions_closed_total{database="soak",close_reason="upstream \\"gone\\""} 1
        blipscope_sessions_active{database="soak",subprotocol="BLIP_3+CBMobile_3"} 0
        blipscope_capture_bytes_total 123456
        not a sample line
        """

    @Test("series of one name are summed over their labels; lines that are not samples are skipped")
    func sums() {
        let metrics = MetricsText(exposition)
        #expect(metrics.sum("blipscope_messages_total") == 3_300)
        #expect(metrics.sum("blipscope_capture_bytes_total") == 123_456)
        #expect(metrics.sum("blipscope_capture_dropped_total") == 0)
        #expect(metrics.samples.count == 10)
    }

    @Test("sums grouped by a label, escaped quotes read back")
    func byLabel() {
        let reasons = MetricsText(exposition).sums("blipscope_sessions_closed_total", by: "close_reason")
        #expect(reasons == ["client_normal": 39, "upstream \"gone\"": 1])
    }

    @Test("the soak's relay counters come from the right series")
    func relayCounters() {
        let counters = RelayCounters(metrics: MetricsText(exposition))
        #expect(counters.messages == 3_300)
        #expect(counters.decodeFailures == 2)
        #expect(counters.sessions == 40)
        #expect(counters.activeSessions == 0)
        #expect(counters.captureBytes == 123_456)
        #expect(counters.closeReasons["client_normal"] == 39)
    }

    @Test("/proc status fields are read in KiB")
    func procStatusField() {
        let status = "Name:\tblipscope\nVmHWM:\t   52000 kB\nVmRSS:\t   48123 kB\nThreads:\t4\n"
        #expect(ProcessProbe.field("VmRSS", in: status) == 48_123)
        #expect(ProcessProbe.field("VmHWM", in: status) == 52_000)
        #expect(ProcessProbe.field("VmSwap", in: status) == nil)
    }
}
