/// Why a soak could not run (as opposed to a run that fails its target, which is a report).
public struct SoakError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
