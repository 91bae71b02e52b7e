import Chime
import ExampleApps
import Foundation

// The "Show me" tutorial's app: a quiz question whose answer is hidden until you ask for it.
let terminal = ExampleTerminal()
let app = ShowMeApp()
await terminal.say(
    """
    Show me example. In 5 s a notification shows a question only.
    Choose "Show me" and 3 s later it comes back with the answer (taken from its userInfo),
    without the button. Type q to quit.
    """)
app.showNotification(
    with: ("What is the capital of Australia?", "Canberra"), showBody: false, withAction: true,
    atDate: Date().addingTimeInterval(5))
await terminal.run()
