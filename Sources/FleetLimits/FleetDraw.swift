/// What the shell is to ask Redis for one limit key: `want` tokens, giving `giveBack` unused
/// ones back first.
public struct FleetDraw: Sendable, Hashable {
    public var key: FleetBucketKey
    public var rate: Double
    public var burst: Double
    public var want: Int
    public var giveBack: Int
}
