import Foundation

extension ServiceConfiguration {
    /// The resolved configuration, as `hotfolder check` prints it: every key
    /// with the value in force, defaults included.
    public var resolvedDescription: String {
        var lines = ["# \(file)", "[service]", "workers = \(workers)", "log-level = \(logLevel.rawValue)", "instance = \(instance)"]
        lines.append("cups-server = \(cupsServer ?? "(CUPS_SERVER or the libcups default)")")
        lines.append("user = \(user ?? "(the user that starts it)")")
        lines.append("umask = " + String(format: "%03o", umask))
        lines.append("generation = \(generation.rawValue)")
        lines.append("shutdown-timeout = \(HotFolderService.format(shutdownTimeout))")
        lines.append("job-timeout = \(HotFolderService.format(jobTimeout))")
        lines.append("job-memory = \(jobMemory.map { "\($0 >> 20)M" } ?? "0 (no limit)")")
        for f in folders {
            lines.append("")
            lines.append("[folder \(f.name)]")
            lines.append("path = \(f.path)")
            lines.append("recursive = \(f.recursive ? "yes" : "no")")
            lines.append("settle = \(HotFolderService.format(f.settle))")
            lines.append("watch = \(f.watch.rawValue)")
            lines.append("poll-interval = \(HotFolderService.format(f.pollInterval))")
            lines.append("rescan = \(f.rescan == 0 ? "0 (none)" : HotFolderService.format(f.rescan))")
            lines.append("include = \(f.include.isEmpty ? "(every file not ignored)" : f.include.joined(separator: ", "))")
            lines.append("ignore = \(f.ignore.isEmpty ? "(built-in list only)" : f.ignore.joined(separator: ", "))")
            lines.append("done = \(f.doneFolder)")
            lines.append("failed = \(f.failedFolder)")
            lines.append("after-success = \(f.afterSuccess.rawValue)")
            lines.append("password = \(f.password == nil ? "(none)" : "(set)")")
            lines.append("max-file-size = \(Pipeline.bytes(f.maxFileSize))")
            lines.append("tickets = \(f.tickets.rawValue)")
            lines.append("ticket-wait = \(HotFolderService.format(f.ticketWait))")
            lines.append("allow = \(f.allow.map { $0.isEmpty ? "none" : $0.map(\.rawValue).joined(separator: ", ") } ?? "(every configured destination)")")
            for d in f.destinations {
                let p = d.destination.rawValue + "."
                if d.destination == .export {
                    lines.append(p + "to = \(d.exportFolder)")
                    lines.append(p + "collision = \(d.collision.rawValue)")
                    lines.append(p + "preview = \(d.preview ? "yes" : "no")")
                    lines.append(p + "min-free = \(d.minFree == 0 ? "0 (no check)" : Pipeline.bytes(d.minFree))")
                } else {
                    lines.append(p + "printer = \(d.printer ?? "(the CUPS default destination)")")
                    lines.append(p + "copies = \(d.copies)")
                    lines.append(p + "max-copies = \(d.copiesLimit) (for tickets)")
                    if !d.sidesOptions.isEmpty { lines.append(p + "sides = \(d.sidesOptions.joined(separator: ", "))") }
                    if let m = d.media { lines.append(p + "media = \(m)") }
                    if let c = d.color { lines.append(p + "color = \(c)") }
                    if let o = d.orientation { lines.append(p + "orientation = \(o)") }
                    if !d.options.isEmpty { lines.append(p + "options = " + d.options.map { "\($0.name)=\($0.value)" }.joined(separator: " ")) }
                    lines.append(p + "timeout = \(HotFolderService.format(d.timeout))")
                }
                lines.append(p + "name = \(d.name.source)")
                lines.append(p + "format = \(d.fileFormats.map(\.rawValue).joined(separator: ", "))")
                if d.fileFormats.contains(.image) {
                    lines.append(p + "image.type = \(d.imageType.rawValue)")
                    lines.append(p + "image.dpi = \(Int(d.imageDPI))")
                    lines.append(p + "image.quality = \(d.imageQuality)")
                    lines.append(p + "image.max-pages = \(d.imageMaxPages)")
                }
                lines.append(p + "pages = \(d.pageSelections.map(\.description).joined(separator: "; "))")
                lines.append(p + "annotations = \(d.annotationOptions.map(\.rawValue).joined(separator: ", "))")
                lines.append(p + "title = \(d.title?.source ?? "(the document's own)")")
            }
        }
        return lines.joined(separator: "\n")
    }
}
