#!/usr/bin/env sh
# One-line verdict on the Java that Spark will use, instead of a JVM stack trace later.
hint="install Java 17 or newer, e.g. 'sudo apt-get install openjdk-17-jre-headless' (Debian/Ubuntu) or 'brew install openjdk@17' (macOS), or set JAVA_HOME"
if [ -n "$JAVA_HOME" ] && [ -x "$JAVA_HOME/bin/java" ]; then java="$JAVA_HOME/bin/java"; else java=$(command -v java); fi
if [ -z "$java" ]; then
  echo "zorder needs Java 17+ for Spark, but no 'java' was found: $hint." >&2
  exit 1
fi
major=$("$java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\)[."].*/\1/p' | head -n 1)
if [ -z "$major" ] || [ "$major" -lt 17 ]; then
  echo "zorder needs Java 17+ for Spark, but $java is version ${major:-unknown}: $hint." >&2
  exit 1
fi
