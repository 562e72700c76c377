/// A command that could not do its work for a reason the user can fix: ArgumentParser prints
/// `Error: ` and the description (the cause, then what to do), without the usage lines that
/// belong to a mistyped command line.
struct CommandFailure: Error, CustomStringConvertible {
    var cause: String
    var hint: String

    var description: String { "\(cause)\n\(hint)" }
}
