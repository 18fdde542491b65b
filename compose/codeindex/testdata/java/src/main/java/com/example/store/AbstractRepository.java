package com.example.store;

abstract class AbstractRepository {
    protected void check() {}

    protected void log(String what) {
        check();
    }
}
