import Soak
import Testing

@Suite("Arrival order: numbered messages checked as BLIP's sender queue allows")
struct ArrivalOrderTests {
    @Test("one-frame messages arriving in the order they were queued are neither reordered nor duplicated")
    func inOrder() {
        var order = ArrivalOrder(limit: 100)
        for number in 1...50 as ClosedRange<UInt64> { order.arrived(number, singleFrame: true) }
        #expect(order.received == 50)
        #expect(order.reordered == 0)
        #expect(order.duplicated == 0)
        #expect(order.highest == 50)
    }

    @Test("a one-frame message overtaken by a later one is reordered")
    func overtakenSingleFrame() {
        var order = ArrivalOrder(limit: 100)
        order.arrived(1, singleFrame: true)
        order.arrived(3, singleFrame: true)
        order.arrived(2, singleFrame: true)
        #expect(order.reordered == 1)
        #expect(order.received == 3)
    }

    @Test("a message of several frames may finish after later one-frame messages (multiplexing, §4.3)")
    func multiFrameFinishesLate() {
        var order = ArrivalOrder(limit: 100)
        order.arrived(2, singleFrame: true)
        order.arrived(3, singleFrame: true)
        order.arrived(1, singleFrame: false)
        #expect(order.reordered == 0)
        #expect(order.received == 3)
    }

    @Test("a number that comes twice is a duplicate, counted once and not received again")
    func duplicate() {
        var order = ArrivalOrder(limit: 200)
        order.arrived(70, singleFrame: true)
        order.arrived(70, singleFrame: true)
        order.arrived(130, singleFrame: false)
        order.arrived(130, singleFrame: false)
        #expect(order.duplicated == 2)
        #expect(order.received == 2)
    }

    @Test("numbers nobody sends (0, past the limit) are out of range and corrupt the tally")
    func outOfRange() {
        var order = ArrivalOrder(limit: 10)
        order.arrived(0, singleFrame: true)
        order.arrived(11, singleFrame: true)
        order.arrived(10, singleFrame: true)
        #expect(order.outOfRange == 2)
        #expect(order.received == 1)
        var tally = SessionTally()
        tally.add(order)
        #expect(tally.corrupted == 2)
        #expect(tally.reordered == 0)
    }

    @Test("tallies add up field by field")
    func talliesAdd() {
        var one = SessionTally()
        one.sent = 10
        one.echoed = 9
        one.lost = 1
        one.failedSessions = 1
        one.echoSessions = 1
        var two = SessionTally()
        two.sent = 5
        two.echoed = 5
        two.reordered = 2
        two.replicationSessions = 1
        two.pulledRevisions = 100
        two.expectedRevisions = 100
        let sum = one + two
        #expect(sum.sent == 15)
        #expect(sum.echoed == 14)
        #expect(sum.lost == 1)
        #expect(sum.reordered == 2)
        #expect(sum.failedSessions == 1)
        #expect(sum.echoSessions == 1)
        #expect(sum.replicationSessions == 1)
        #expect(sum.pulledRevisions == 100)
    }
}
