package dev.keel.jpf.ext;

import gov.nasa.jpf.ListenerAdapter;
import gov.nasa.jpf.search.Search;
import gov.nasa.jpf.vm.ClassInfo;
import gov.nasa.jpf.vm.NativePeer;
import gov.nasa.jpf.vm.VM;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reports, at the end of a run, which classes JPF loaded from this extension's model jar and
 * which native peer each got, one line {@code keel-jpf-ext: model NAME peer PEER} per class.
 * The JPF gate requires every model class in the jar to appear, bound to this extension's peer
 * where it has native methods: a class path in which jpf-core's model came first, or a peer
 * package list in which jpf-core's peer did, would otherwise pass unnoticed and check the kernel
 * against the wrong model.
 */
public final class ExtensionUse extends ListenerAdapter {

    /** The file name of the model jar, as the gate builds it. */
    static final String MODEL_JAR = "keel-jpf-model.jar";

    private final Map<String, String> loaded = new TreeMap<>();

    @Override
    public void classLoaded(VM vm, ClassInfo ci) {
        String url = ci.getClassFileUrl();
        if (url != null && url.contains(MODEL_JAR)) {
            NativePeer peer = ci.getNativePeer();
            loaded.put(ci.getName(), peer == null ? "none" : peer.getClass().getName());
        }
    }

    @Override
    public void searchFinished(Search search) {
        loaded.forEach((name, peer) -> System.out.println("keel-jpf-ext: model " + name + " peer " + peer));
    }
}
