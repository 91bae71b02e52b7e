/// Chime's version (`chime --version`, the service's banner and `/healthz`).
public enum ChimeVersion {
    /// The release this source is: semantic versioning.
    public static let number = "0.4.0"
}
