import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    // MARK: categories

    static let categories = Command(
        name: "categories", summary: "set or list an app's categories of actions",
        usage: "chime categories set FILE.json | list | example [--app BUNDLE_IDENTIFIER]",
        examples: [
            "chime categories example > alarm.json", "chime categories set alarm.json --app com.example.alarm",
            "chime categories list --app com.example.alarm --json",
        ],
        options: [.value("app", "the app (default: the only registered app)")],
        notes: [
            "FILE.json is a JSON array of categories, each with its actions in order (`chime categories example` prints this one):",
            "",
        ] + categoriesExample.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 } + [
            "",
            "Action options: foreground, destructive, authenticationRequired. A text-input action has textInputButtonTitle",
            "and textInputPlaceholder. Category options: customDismissAction (the app hears of dismissals), hiddenPreviewsShowTitle,",
            "hiddenPreviewsShowSubtitle. The file replaces all of the app's categories.",
        ],
        run: { arguments, cli in
            switch arguments.positionals.first {
            case "example":
                cli.write(categoriesExample)
            case "set":
                guard arguments.positionals.count == 2 else {
                    throw UsageError("give the categories file: chime categories set FILE.json")
                }
                let file = arguments.positionals[1]
                let data = try readFile(file, what: "the categories file")
                let client = try cli.client(arguments)
                let app = try await cli.app(arguments, client)
                let response = try await client.send(.setCategories, ["app": app], body: data)
                if arguments.has("json") {
                    cli.printJSON(response)
                } else {
                    let count = response.json?.arrayValue.count ?? 0
                    cli.write("\(app): \(count) \(count == 1 ? "category" : "categories") set.")
                }
            case "list":
                let client = try cli.client(arguments)
                let app = try await cli.app(arguments, client)
                let categories = try await client.list(.getCategories, ["app": app])
                if arguments.has("json") {
                    cli.printJSON(categories)
                    return 0
                }
                typealias Field = JSONFieldName.Category
                for category in categories {
                    let actions =
                        category[Field.actions]?.arrayValue.compactMap { $0[JSONFieldName.Action.title]?.stringValue }
                        ?? []
                    cli.write("\(category[Field.identifier]?.stringValue ?? "?"): \(actions.joined(separator: " · "))")
                }
            default:
                throw UsageError("say what to do: set FILE.json, list, or example")
            }
            return 0
        })

    /// The alarm of the tutorials as a categories file: what `chime categories example` prints.
    static let categoriesExample = """
        [
          {
            "identifier": "alarm.category",
            "actions": [
              {"identifier": "snooze", "title": "Snooze 5 Sec"},
              {"identifier": "comment", "title": "Add Comment", "options": ["foreground"],
               "textInputButtonTitle": "Add", "textInputPlaceholder": "Add Comment Here"}
            ],
            "options": ["customDismissAction"]
          }
        ]
        """
}
