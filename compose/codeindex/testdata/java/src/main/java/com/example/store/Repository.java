package com.example.store;

import java.util.Optional;

/** Stores entities by id. Implementations must be thread-safe. */
public interface Repository<T> {
    /** Find an entity. */
    Optional<T> find(String id);

    void save(String id, T value);
}
