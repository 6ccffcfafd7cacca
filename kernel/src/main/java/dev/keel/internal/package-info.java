/**
 * The kernel's internals (not exported): the allocation table, the in-flight guard, the reclaim
 * tracker and the JFR events. Null-marked like {@code dev.keel}.
 */
@NullMarked
package dev.keel.internal;

import org.jspecify.annotations.NullMarked;
