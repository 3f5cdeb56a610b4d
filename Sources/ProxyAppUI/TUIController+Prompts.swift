import CaptureExport
import CaptureStore
import FlowExport
import FlowFilter
import Foundation
import ProxyModel
import TerminalUI

/// Prompts (filter, search, export and curl file names) and yes/no questions.
extension TUIController {
    func handleOverlay(_ overlay: Overlay, _ key: Key) {
        switch overlay {
        case .confirm(let kind):
            self.overlay = nil
            guard key == .character("y") || key == .character("Y") else {
                message = StatusMessage(.info, "cancelled")
                return
            }
            confirmed(kind)
        case .copyMenu(let id):
            self.overlay = nil
            copy(key, of: id)
        case .prompt(let kind, var editor, let error):
            switch editor.handle(key) {
            case .edited: self.overlay = .prompt(kind, editor, error: error)
            case .ignored: break
            case .cancelled:
                self.overlay = nil
                if kind == .filter, filter != nil { message = StatusMessage(.info, "filter unchanged: \(filter?.text ?? "")") }
            case .submitted(let text):
                self.overlay = nil
                submit(kind, text, editor: editor)
            }
        }
    }

    private func confirmed(_ kind: ConfirmKind) {
        switch kind {
        case .quit:
            wantsQuit = true
        case .clearAll:
            let repository = repository
            let feed = feed
            worker.perform("cannot clear the capture", lane: .long) {
                let count = try repository.deleteAllFlows()
                feed.reset()
                return [.message(StatusMessage(.info, "deleted \(count) flows"))]
            }
        }
    }

    private func submit(_ kind: PromptKind, _ text: String, editor: LineEditor) {
        switch kind {
        case .filter:
            // Parsed as typed (the lexer skips blanks), so an error's column matches the prompt.
            guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                if filter != nil { setFilter(nil) }
                return
            }
            do {
                setFilter(try FlowFilter(parsing: text))
            } catch {
                reopen(kind, editor, error: error)
            }
        case .search:
            guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                search = nil
                return
            }
            do {
                search = try FlowFilter(parsing: text)
                searchAgain(forward: true)
            } catch {
                reopen(kind, editor, error: error)
            }
        case .exportHAR:
            let name = text.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return }
            exportHAR(to: context.outputPath(name))
        case .curl(let id):
            let name = text.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return }
            saveCurl(id, to: context.outputPath(name))
        case .intercept:
            if let error = submitIntercept(text, editor: editor) { reopen(kind, editor, error: error) }
        }
    }

    /// A bad expression: the prompt stays open on the typed text, the cursor at the error, the
    /// error above it; the filter in force does not change.
    private func reopen(_ kind: PromptKind, _ editor: LineEditor, error: FilterSyntaxError) {
        var editor = editor
        editor.moveCursor(to: error.position)
        let kept = kind == .filter ? (filter.map { " (filter in force: \($0.text))" } ?? "") : ""
        overlay = .prompt(kind, editor, error: "\(error.message) at column \(error.column)\(kept); Esc cancels")
    }

    private func setFilter(_ newFilter: FlowFilter?) {
        filter = newFilter
        feed.setQuery(newFilter.map { FlowQuery(filter: $0) })
        list = FlowListState(totalRows: 0, visibleRows: list.visibleRows, filterText: newFilter?.text ?? "")
        message = StatusMessage(.info, newFilter.map { "filter: \($0.text)" } ?? "filter cleared: showing every flow")
    }

    /// Counts what `e` will export, for its prompt: the marked flows of the view if any, else
    /// the whole view (every flow matching the filter, also those not scanned yet).
    func countExportScope() {
        let repository = repository
        let filter = filter
        worker.perform("cannot count the flows to export", lane: .long) {
            let marked = try repository.count(matching: FlowQuery(filter: filter, markedOnly: true))
            if marked > 0 { return [.exportScope("\(NumberText.grouped(marked)) marked flow\(marked == 1 ? "" : "s")")] }
            let all = try repository.count(matching: FlowQuery(filter: filter))
            return [.exportScope("\(NumberText.grouped(all)) flow\(all == 1 ? "" : "s") in view")]
        }
    }

    /// Exports the marked flows of the view when some are marked, else the whole view.
    private func exportHAR(to path: String) {
        let repository = repository
        let filter = filter
        let version = context.version
        message = StatusMessage(.info, "exporting to \(path)…")
        worker.perform("export failed", lane: .long) {
            let markedCount = try repository.count(matching: FlowQuery(filter: filter, markedOnly: true))
            let query = FlowQuery(filter: filter, markedOnly: markedCount > 0)
            let count = try HARFileExport(query: query, creatorVersion: version).write(from: repository, to: path)
            let what = markedCount > 0 ? "marked" : (filter == nil ? "" : "filtered")
            return [.message(StatusMessage(.info, "exported \(count) \(what.isEmpty ? "" : what + " ")flows to \(path)"))]
        }
    }

    private func saveCurl(_ id: Int64, to path: String) {
        let repository = repository
        worker.perform("cannot save the curl command") {
            guard let flow = try repository.flow(id: id) else {
                return [.message(StatusMessage(.error, "flow #\(id) is no longer in the capture"))]
            }
            guard CurlCommand.isReproducible(flow) else {
                return [.message(StatusMessage(.error, "flow #\(id) is a CONNECT tunnel: there is no HTTP request to repeat"))]
            }
            let script = "#!/bin/sh\n" + CurlCommand.render(flow) + "\n"
            // Through ExportDestination, as HAR exports: written whole or not at all, a new
            // script private to its owner (0700: it may hold credentials), a replaced file
            // keeping its mode.
            let destination = ExportDestination(path: path)
            var output: FileOutput?
            do {
                let file = try destination.open(newFileMode: 0o700)
                output = file
                try Array(script.utf8).withUnsafeBytes { try file.write($0) }
                try destination.commit(file)
            } catch {
                if let output { destination.abandon(output) }
                return [.message(StatusMessage(.error, "cannot write \(path): \(CaptureErrorText.describe(error))"))]
            }
            return [.message(StatusMessage(.info, "saved flow #\(id) as a curl command to \(path)"))]
        }
    }
}
