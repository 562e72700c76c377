import ArgumentParser

/// How decoded records are printed: shared by `inspect` and `sniff`, which print the same lines.
struct RecordOutputOptions: ParsableArguments {
    @Flag(help: "One JSON object per line instead of text.")
    var json = false

    @Flag(help: "Also list ACK frames.")
    var acks = false

    @Flag(help: "Also list each frame of a message that took several (number, flags, size on the wire), interleaved as sent.")
    var frames = false

    @Option(help: "Characters of body preview in text output.")
    var preview = 60
}
