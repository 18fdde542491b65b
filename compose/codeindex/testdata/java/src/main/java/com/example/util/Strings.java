package com.example.util;

import org.apache.commons.lang3.StringUtils;

public final class Strings {
    private Strings() {}

    /** Trims a string. */
    public static String trim(String s) {
        return StringUtils.trim(s);
    }

    public static void requireNonBlank(String s) {
        if (trim(s).isEmpty()) {
            throw new IllegalArgumentException("blank");
        }
    }

    public enum Case { UPPER, LOWER; String apply(String s) { return trim(s); } }
}
