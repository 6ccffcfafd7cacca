/** A Keel embedder in miniature: it needs the kernel's module and nothing else. */
module dev.keel.example.consumer {
    requires dev.keel.kernel;
}
