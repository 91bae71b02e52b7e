extension APNsPayload {
    /// A silent (background) push: `content-available` with nothing to show — no alert text, sound
    /// or badge. It is not presented and not listed as delivered; the app gets a `silentPush` event.
    public var isSilent: Bool {
        isContentAvailable && content.title.isEmpty && content.subtitle.isEmpty && content.body.isEmpty
            && content.sound == nil && content.badge == nil
    }
}

extension APNsPayload {
    /// Whether the app's notification service extension may change the notification before it is
    /// shown, as on iOS: `mutable-content: 1` and an alert (a title, subtitle or body to show).
    public var goesThroughServiceExtension: Bool {
        isMutableContent && !isSilent && !(content.title.isEmpty && content.subtitle.isEmpty && content.body.isEmpty)
    }
}
