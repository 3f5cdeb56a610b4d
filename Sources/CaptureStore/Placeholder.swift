enum CaptureStorePlaceholder {}
