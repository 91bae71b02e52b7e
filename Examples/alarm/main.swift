import Chime
import ExampleApps

// The alarm tutorial's app, on the real clock, with its notifications in this terminal.
let terminal = ExampleTerminal()
let app = AlarmApp()
app.onCommentsLabelChange = { text in print("(the app's comment label now reads: \"\(text)\")") }

await terminal.say(
    """
    Alarm example. The alarm goes off in 10 s (Start was pressed for you).
    When it rings, type the number of an action and Enter:
      Snooze 5 Sec brings it back 5 s later; Add Comment asks for a text that becomes its body.
    Type q (or end the input) to quit.
    """)
app.load {
    app.start()
}
await terminal.run()
