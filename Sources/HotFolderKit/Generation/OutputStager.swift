import Foundation
import Glibc

/// Makes one document's staged files, destination by destination: it owns the
/// open PDF (the dropped one, or an image converted to one), reopening it where
/// an earlier destination's generation changed it.
struct OutputStager {
    let pipeline: Pipeline
    let input: FileDescriptor
    var warnings: [String] = []
    private var document: PDFDocument?
    private var documentIsPristine = true
    /// The PDF generated from (the original, or the converted image).
    private var source: FileDescriptor?
    private var temporaries: [String] = []

    init(pipeline: Pipeline, input: FileDescriptor) {
        self.pipeline = pipeline
        self.input = input
    }

    var job: JobFolder { pipeline.job }
    var folder: FolderConfiguration { pipeline.folder }

    /// Opens the dropped PDF and learns its facts.
    mutating func openPDF(into facts: inout DocumentFacts) throws(JobFailure) {
        source = input
        let document = try pipeline.open(input)
        self.document = document
        do {
            let info = try document.info()
            facts.pages = info.pages
            facts.title = try document.title()
            facts.encrypted = info.encrypted
            facts.allowPrint = info.allowPrintLowResolution || info.allowPrintHighResolution
            facts.allowPrintHighResolution = info.allowPrintHighResolution
            facts.allowModifyAnnotations = info.allowModifyAnnotations
            facts.annotations = info.annotations
            facts.signed = info.signed
        } catch {
            throw Pipeline.damaged(error)
        }
        guard facts.pages > 0 else {
            throw JobFailure(.open, "the PDF has no pages", remedy: "Drop a PDF that has at least one page.")
        }
    }

    /// The document to generate from, fresh: generation changes an open document.
    private mutating func pristineDocument(_ facts: inout DocumentFacts) throws(JobFailure) -> PDFDocument {
        if source == nil {
            // An image: converted once, then generated from like a dropped PDF.
            let converted: FileDescriptor
            do {
                let output = try job.create(Pipeline.convertedFile)
                temporaries.append(Pipeline.convertedFile)
                let pages = try ImageConverter.convertToPDF(input, description: job.originalName, output: output)
                facts.pages = pages
                converted = try job.openForReading(Pipeline.convertedFile)
            } catch let error as ImageError {
                throw JobFailure(.open, "the image cannot be converted to PDF: \(error.message)", remedy: "Open it in an image viewer, save it anew (JPEG, PNG or TIFF) and drop that.")
            } catch {
                throw JobFailure(.generate, "cannot write the converted image: \(error)", remedy: "Check free space and permissions of \(folder.serviceArea).", transient: true)
            }
            source = converted
            do {
                document = try PDFDocument.open(converted, description: job.originalName, password: nil)
            } catch {
                throw JobFailure(.generate, "the converted image does not open as PDF: \(error.message)", remedy: "Save the image anew and drop it again.")
            }
        }
        if let document, documentIsPristine {
            documentIsPristine = false
            return document
        }
        if let document { warnings += document.warnings }
        guard let source else { throw JobFailure(.generate, "no document to generate from", remedy: "Drop the document again.") }
        let fresh: PDFDocument
        if source.rawValue == input.rawValue {
            fresh = try pipeline.open(input)
        } else {
            do { fresh = try PDFDocument.open(source, description: job.originalName, password: nil) } catch { throw Pipeline.damaged(error) }
        }
        document = fresh
        documentIsPristine = false
        return fresh
    }

    mutating func finish() {
        if let document { warnings += document.warnings }
        for file in temporaries { try? job.remove(file) }
    }

    /// Generates what `sharing` asks for with `options` into staged files.
    mutating func stage(_ sharing: SharingConfiguration, _ options: ResolvedOptions, facts: inout DocumentFacts) throws(JobFailure) -> StagedOutput {
        let kind = sharing.destination
        var output = StagedOutput(destination: kind, files: [], format: options.format, pages: options.pages.description,
                                  annotations: options.annotations, ext: "pdf", pageCount: 0, documentPages: facts.pages)
        if options.format == .original {
            let file = JobFolder.outputName(kind, ext: "original")
            do {
                let copy = try job.create(file)
                try copy.copyContents(of: input)
            } catch {
                throw JobFailure(.generate, "cannot copy the original: \(error)", remedy: "Check free space and permissions of \(folder.serviceArea).", transient: error.isTransient)
            }
            output.files = [StagedFile(file: file, role: .document)]
            output.pages = "all"
            output.annotations = .embed
            output.ext = FileNameSanitizer.split(job.originalName).ext
            // A preview needs something to draw: a PDF, or an image (converted for it).
            if kind == .export && sharing.preview && OptionResolver.Document(type: facts.type, pages: 0, annotations: 0).convertible {
                _ = try pristineDocument(&facts)
                if let source {
                    let password = source.rawValue == input.rawValue ? folder.password : nil
                    output.files.append(try preview(from: source, password: password, kind: kind))
                }
            }
            return output
        }

        let document = try pristineDocument(&facts)
        output.documentPages = facts.pages
        let indexes = try pipeline.pageIndexes(options.pages, document: document, facts: facts, sharing: sharing)
        let title = options.title ?? sharing.title.map { FileNameSanitizer.cleanTitle($0.render(pipeline.templateValues(facts))) }
        var mode = options.annotations.mode
        if options.annotations == .summary && kind == .print { mode = .flattenForPrint }

        // The summary: its pages are appended, its list is written beside the output.
        var summaryFile: String?
        if options.annotations == .summary {
            summaryFile = try summary(document, indexes: indexes, facts: facts, kind: kind, title: title, into: &output)
        }

        let pdfFile = options.format == .pdf ? JobFolder.outputName(kind, ext: "pdf") : JobFolder.outputName(kind, ext: "render.pdf")
        do {
            // Not synced here: the destination makes it durable (in a group
            // commit) before it is published under its final name.
            let generated = try job.create(pdfFile)
            let append = try summaryFile.map { file throws(SystemError) in try job.openForReading(file) }
            try document.generate(pages: indexes.count == facts.pages ? nil : indexes, annotations: mode, title: title, output: generated, append: append)
        } catch let error as PDFError {
            if error.kind == .outOfMemory { throw Pipeline.outOfMemory }
            if case .system(let e) = error.kind, e != 0 {
                // The engine's own write failed (a full disk, a quota): the
                // service area's fault, not the document's; it waits and is retried.
                let system = SystemError("write", path: job.directory.path + "/" + pdfFile, errno: e)
                throw JobFailure(.generate, "cannot write the result: \(system) (\(error.message))", remedy: "Check free space and permissions of \(folder.serviceArea).", transient: system.isTransient)
            }
            throw JobFailure(.generate, "the PDF engine could not write the result: \(error.message)", remedy: "Open the document in a PDF viewer, save or print it to a new PDF, and drop that.")
        } catch let error as SystemError {
            throw JobFailure(.generate, "cannot write the result: \(error)", remedy: "Check free space and permissions of \(folder.serviceArea).", transient: error.isTransient)
        } catch {
            throw JobFailure(.generate, "\(error)", remedy: "Drop the document again.")
        }
        if let summaryFile { try? job.remove(summaryFile) }
        if facts.signed && options.annotations != .embed {
            warnings.append("the document is digitally signed; the generated copy no longer carries a valid signature")
        }
        output.pageCount = indexes.count
        if options.format == .pdf {
            output.files.insert(StagedFile(file: pdfFile, role: .document), at: 0)
        } else {
            temporaries.append(pdfFile)
            let pages = try images(from: pdfFile, sharing: sharing, indexes: indexes, facts: facts)
            output.files.insert(contentsOf: pages, at: 0)
            output.ext = sharing.imageType.ext
            output.pageCount = pages.count
        }
        if kind == .export && sharing.preview {
            do {
                let generated = try job.openForReading(pdfFile)
                output.files.append(try preview(from: generated, password: nil, kind: kind))
            } catch let failure as JobFailure {
                throw failure
            } catch {
                throw JobFailure(.generate, "cannot read the result for its preview: \(error)", remedy: "Check \(folder.serviceArea).", transient: true)
            }
        }
        return output
    }

    /// Writes the summary pages (a PDF to append) and the annotation list.
    private mutating func summary(_ document: PDFDocument, indexes: [Int], facts: DocumentFacts, kind: DestinationKind,
                                  title: String?, into output: inout StagedOutput) throws(JobFailure) -> String? {
        let records: [AnnotationRecord]
        let size: (width: Double, height: Double)
        do {
            records = try document.annotations(pages: indexes)
            size = try document.pageSize(indexes.first ?? 0)
        } catch {
            throw JobFailure(.open, "cannot read the annotations: \(error.message)", remedy: "Save the document anew in a PDF viewer and drop it again.")
        }
        let listFile = JobFolder.outputName(kind, ext: "annotations.json")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            let data = (try? encoder.encode(records)) ?? Data("[]".utf8)
            try job.create(listFile).write(Array(data) + [UInt8(ascii: "\n")])
        } catch {
            throw JobFailure(.generate, "cannot write the annotation list: \(error)", remedy: "Check free space and permissions of \(folder.serviceArea).", transient: error.isTransient)
        }
        output.files.append(StagedFile(file: listFile, role: .annotations))
        guard !records.isEmpty else {
            // Only form fields or links on the selected pages: nothing to summarize.
            warnings.append("the selected pages carry no annotations to summarize; no summary pages added")
            return nil
        }
        let pagesFile = JobFolder.outputName(kind, ext: "summary.pdf")
        do {
            let heading = title ?? facts.title ?? job.originalName
            let result = try SummaryPages.write(records, title: heading, pageWidth: size.width, pageHeight: size.height,
                                                to: try job.create(pagesFile))
            temporaries.append(pagesFile)
            if result.unshownCharacters > 0 {
                warnings.append("\(result.unshownCharacters) character(s) in the annotation summary could not be shown: no installed font covers them (they appear as boxes; the annotations' JSON list has the exact text)")
            }
        } catch let error as SummaryError {
            throw JobFailure(.generate, "cannot lay out the annotation summary: \(error.message)", remedy: "Drop the document again; if it fails again, allow another annotation option.")
        } catch {
            throw JobFailure(.generate, "cannot write the annotation summary: \(error)", remedy: "Check free space and permissions of \(folder.serviceArea).", transient: true)
        }
        return pagesFile
    }

    /// One image per page of the generated PDF.
    private func images(from pdfFile: String, sharing: SharingConfiguration, indexes: [Int], facts: DocumentFacts) throws(JobFailure) -> [StagedFile] {
        let kind = sharing.destination
        do {
            let renderer = try PageRenderer.open(try job.openForReading(pdfFile), description: job.originalName, password: nil)
            var files: [StagedFile] = []
            for i in 0..<renderer.pageCount {
                // Summary pages follow the selected ones: they count on from the document's end.
                let page = i < indexes.count ? indexes[i] + 1 : facts.pages + (i - indexes.count) + 1
                let file = JobFolder.outputName(kind, ext: "p\(page).\(sharing.imageType.ext)")
                try renderer.render(page: i, type: sharing.imageType, dpi: sharing.imageDPI, quality: sharing.imageQuality,
                                    to: try job.create(file))
                files.append(StagedFile(file: file, role: .page, page: page))
            }
            return files
        } catch let error as ImageError {
            throw JobFailure(.generate, "cannot render the pages as images: \(error.message)", remedy: "Lower \(kind.rawValue).image.dpi, or allow another format.")
        } catch {
            throw JobFailure(.generate, "cannot write the images: \(error)", remedy: "Check free space and permissions of \(folder.serviceArea).", transient: true)
        }
    }

    /// A small PNG of the first page (seed 001's preview image).
    private func preview(from pdf: FileDescriptor, password: String?, kind: DestinationKind) throws(JobFailure) -> StagedFile {
        let file = JobFolder.outputName(kind, ext: "preview.png")
        do {
            let renderer = try PageRenderer.open(pdf, description: job.originalName, password: password)
            try renderer.render(page: 0, type: .png, dpi: 72, quality: 90, fitWithin: Self.previewSize, to: try job.create(file))
        } catch let error as ImageError {
            throw JobFailure(.generate, "cannot render the preview: \(error.message)", remedy: "Set export.preview = no for this folder, or drop the document again.")
        } catch {
            throw JobFailure(.generate, "cannot write the preview: \(error)", remedy: "Check free space and permissions of \(folder.serviceArea).", transient: true)
        }
        return StagedFile(file: file, role: .preview)
    }

    /// The preview's longer side, in pixels.
    static let previewSize = 512
}
