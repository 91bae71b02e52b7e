import Chime

#if canImport(Glibc)
    import Glibc
#endif

/// What the four example executables share: a terminal surface on the app's center, an intro,
/// and the read loop (until `q`, end of input, or `--exit-after SECONDS`). It leaves the app's
/// notifications alone: each example replaces only the requests it adds (by their identifiers).
public final class ExampleTerminal {
    public let center: UNUserNotificationCenter
    public let surface: TerminalSurface

    /// Attaches a terminal surface to `center` (answers waiting in the outbox are handed over as
    /// soon as the app sets its delegate).
    public init(center: UNUserNotificationCenter = .current()) {
        setvbuf(stdout, nil, _IOLBF, 0)  // the app's print() lines appear in order with the surface's
        self.center = center
        surface = TerminalSurface(center: center)
        center.addSurface(surface)
        let arguments = CommandLine.arguments
        if let index = arguments.firstIndex(of: "--exit-after"), index + 1 < arguments.count,
            let seconds = Double(arguments[index + 1])
        {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                print("\n(--exit-after \(arguments[index + 1]): exiting)")
                exit(0)
            }
        }
    }

    /// Prints lines, in order with the notifications shown. With `CHIME_SERVICE` set, the app's
    /// notifications live in that service: the user answers in its web center.
    public func say(_ text: String) async {
        await surface.print(text)
        if let service = ProcessInfo.processInfo.environment["CHIME_SERVICE"], !service.isEmpty {
            await surface.print(
                "Connected to the Chime service at \(service): answer in its web center (`chime open`) or with `chime respond`."
            )
        }
    }

    /// Reads the user's answers and commands until `q` or end of input.
    public func run(commands: TerminalSurface.CommandHandler? = nil) async {
        await surface.run(commands: commands)
        print("Bye.")
    }
}
