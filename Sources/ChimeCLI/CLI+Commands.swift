extension CLI {
    /// Every subcommand, in the order `chime --help` lists them.
    public static let commands: [Command] = [
        serve, open, apps, devices, categories, add, list, remove, delivered, respond, receipt, focus, summary, push,
        deviceToken, events, status, backup, service, version,
    ]
}
