import Foundation

/// Where Chime keeps its files by default: `$XDG_DATA_HOME/chime`, with XDG's default
/// `~/.local/share` when the variable is unset or not an absolute path. The embedded center and
/// `chime serve` both use it.
public enum DataDirectory {
    public static func chime(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/chime" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/chime"
    }
}
