package dev.keel.spec;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serial;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.rmi.Remote;

/**
 * A class outside the deserialization allow-list whose every instance made by deserialization
 * leaves a file behind: {@code readObject} writes {@link #file}. It implements {@link Remote}, so
 * that the registry's own default filter (which allows any {@code Remote}) would let it through,
 * and {@code Registry.bind} takes it.
 */
final class DeserializationMarker implements Remote, Serializable {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String file;

    DeserializationMarker(Path file) {
        this.file = file.toString();
    }

    @Serial
    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        Files.writeString(Path.of(file), "instantiated by deserialization");
    }
}
