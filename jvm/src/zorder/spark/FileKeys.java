/*
 * zorder's file plan executed in the JVM: each row's file packed above its key
 * along the curve, the long that zorder.curves.plan.FilePlan.packed computes in
 * Python (and, for a partitioned write, the partition's first file added).
 *
 * The plan is fitted on the driver in Python and arrives here once, as bytes
 * (zorder.spark.file_keys.encode_plans writes them; the layout is documented
 * there). Each row then costs a binary search per column over at most 1,023
 * boundaries, a table lookup per column for the bit interleave (or Skilling's
 * transform for Hilbert), and a walk down the file cells: no Python worker, no
 * Arrow transfer. Values arrive as Spark's UDF converters give them: longs
 * (integers, booleans, unix days and microseconds), doubles, byte arrays
 * (strings as their UTF-8 bytes, compared unsigned as Spark compares strings),
 * BigDecimals, and LocalDateTimes for timestamp_ntz.
 */
package zorder.spark;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.Serializable;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.math.BigDecimal;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF10;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.api.java.UDF3;
import org.apache.spark.sql.api.java.UDF4;
import org.apache.spark.sql.api.java.UDF5;
import org.apache.spark.sql.api.java.UDF6;
import org.apache.spark.sql.api.java.UDF7;
import org.apache.spark.sql.api.java.UDF8;
import org.apache.spark.sql.api.java.UDF9;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

public final class FileKeys implements Serializable {
  private static final long serialVersionUID = 1L;
  static final int MAGIC = 0x5A4B4559; // "ZKEY"
  static final int VERSION = 1;

  static final byte LONG = 0;
  static final byte DOUBLE = 1;
  static final byte BYTES = 2;
  static final byte DECIMAL = 3;
  static final byte LOCAL_DATETIME = 4;

  private static final byte UNKEYED = 0;
  private static final byte STRING_KEYS = 1;
  private static final byte LONG_KEYS = 2;

  private static final VarHandle BIG_ENDIAN_LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private final int dims;
  private final int bits;
  private final boolean hilbert;
  private final int cellShift;
  private final int droppedBits;
  private final byte[] kinds;
  private final byte keyed;
  private final Map<Object, Integer> planOf;
  private final Plan[] plans;
  private transient Spread spread; // built on first use where the plan is run

  /** Each column's id -> its bits spread to their places in the Z-value. */
  private static final class Spread {
    final long[][] tables; // final: safely published to any thread that sees the Spread

    Spread(int dims, int bits) {
      tables = new long[dims][1 << bits];
      for (int d = 0; d < dims; d++) {
        for (int v = 0; v < (1 << bits); v++) {
          long out = 0;
          for (int level = 0; level < bits; level++) {
            out |= ((long) ((v >>> level) & 1)) << (level * dims + dims - 1 - d);
          }
          tables[d][v] = out;
        }
      }
    }
  }

  private FileKeys(DataInputStream in) throws IOException {
    if (in.readInt() != MAGIC || in.readInt() != VERSION) {
      throw new IllegalArgumentException("zorder: not a file plan of this version");
    }
    dims = in.readInt();
    bits = in.readInt();
    hilbert = in.readByte() == 1;
    cellShift = in.readInt();
    droppedBits = in.readInt();
    kinds = new byte[in.readInt()];
    in.readFully(kinds);
    keyed = in.readByte();
    plans = new Plan[in.readInt()];
    planOf = new HashMap<>();
    for (int p = 0; p < plans.length; p++) {
      if (keyed == STRING_KEYS) {
        planOf.put(readText(in), p);
      } else if (keyed == LONG_KEYS) {
        planOf.put(in.readLong(), p);
      }
      plans[p] = new Plan(in, kinds, dims);
    }
  }

  /** The plan encoded in {@code bytes}. */
  public static FileKeys parse(byte[] bytes) throws IOException {
    return new FileKeys(new DataInputStream(new ByteArrayInputStream(bytes)));
  }

  /**
   * The packed key of each row, as a Column over {@code inputs}: the partition
   * key first when the plan is keyed, then one per clustering column. Up to ten
   * inputs are the UDF's own arguments, more go in one struct (converted to a
   * Row a row, which costs a little more).
   */
  public static Column column(byte[] bytes, Column[] inputs) throws IOException {
    FileKeys k = parse(bytes);
    return udf(k, inputs.length).asNonNullable().apply(inputs.length <= 10 ? inputs
        : new Column[] {functions.struct(inputs)});
  }

  private static UserDefinedFunction udf(FileKeys k, int arity) {
    DataType type = DataTypes.LongType;
    switch (arity) {
      case 1:
        return functions.udf((UDF1<Object, Long>) a -> k.packed(a), type);
      case 2:
        return functions.udf((UDF2<Object, Object, Long>) (a, b) -> k.packed(a, b), type);
      case 3:
        return functions.udf(
            (UDF3<Object, Object, Object, Long>) (a, b, c) -> k.packed(a, b, c), type);
      case 4:
        return functions.udf(
            (UDF4<Object, Object, Object, Object, Long>) (a, b, c, d) -> k.packed(a, b, c, d),
            type);
      case 5:
        return functions.udf(
            (UDF5<Object, Object, Object, Object, Object, Long>)
                (a, b, c, d, e) -> k.packed(a, b, c, d, e),
            type);
      case 6:
        return functions.udf(
            (UDF6<Object, Object, Object, Object, Object, Object, Long>)
                (a, b, c, d, e, f) -> k.packed(a, b, c, d, e, f),
            type);
      case 7:
        return functions.udf(
            (UDF7<Object, Object, Object, Object, Object, Object, Object, Long>)
                (a, b, c, d, e, f, g) -> k.packed(a, b, c, d, e, f, g),
            type);
      case 8:
        return functions.udf(
            (UDF8<Object, Object, Object, Object, Object, Object, Object, Object, Long>)
                (a, b, c, d, e, f, g, h) -> k.packed(a, b, c, d, e, f, g, h),
            type);
      case 9:
        return functions.udf(
            (UDF9<Object, Object, Object, Object, Object, Object, Object, Object, Object, Long>)
                (a, b, c, d, e, f, g, h, i) -> k.packed(a, b, c, d, e, f, g, h, i),
            type);
      case 10:
        return functions.udf(
            (UDF10<Object, Object, Object, Object, Object, Object, Object, Object, Object, Object,
                    Long>)
                (a, b, c, d, e, f, g, h, i, j) -> k.packed(a, b, c, d, e, f, g, h, i, j),
            type);
      default:
        return functions.udf(
            (UDF1<Row, Long>) row -> {
              Object[] values = new Object[row.length()];
              for (int i = 0; i < values.length; i++) {
                values[i] = row.get(i);
              }
              return k.packed(values);
            },
            type);
    }
  }

  /** The packed key of one row's inputs (see {@link #column}). */
  public Long packed(Object... inputs) {
    int first = 0;
    Plan plan = plans[0];
    if (keyed != UNKEYED) {
      Object key = inputs[0];
      if (key instanceof Number) {
        key = ((Number) key).longValue();
      }
      Integer index = planOf.get(key);
      if (index == null) {
        throw new IllegalStateException(
            "zorder: a row of a partition the count did not see (" + key + "): the input changed");
      }
      plan = plans[index];
      first = 1;
    }
    long[] ids = new long[plan.searches.length];
    for (int s = 0; s < ids.length; s++) {
      Search search = plan.searches[s];
      ids[s] = search.id(inputs[first + search.input]);
    }
    long key = hilbert ? hilbertKey(ids) : interleave(ids);
    long cell = plan.offset + plan.files.cell(ids, key);
    return (cell << cellShift) | (key >>> droppedBits);
  }

  /** The Z-value of the first {@code dims} ids: bits interleaved, first column first. */
  long interleave(long[] ids) {
    long[][] tables = spreadTables();
    long z = 0;
    for (int d = 0; d < dims; d++) {
      z |= tables[d][(int) ids[d]];
    }
    return z;
  }

  private long[][] spreadTables() {
    Spread built = spread;
    if (built == null) {
      built = new Spread(dims, bits);
      spread = built;
    }
    return built.tables;
  }

  /** Distance along the Hilbert curve (Skilling's transform, then the interleave), branch-free. */
  long hilbertKey(long[] ids) {
    long[] x = Arrays.copyOf(ids, dims);
    long first = x[0]; // x[0], kept out of the array: every step of the loop below reads it
    for (int level = bits - 1; level > 0; level--) {
      long low = (1L << level) - 1;
      first ^= low & -((first >>> level) & 1); // i = 0: reflected where it has the bit
      for (int i = 1; i < dims; i++) {
        long xi = x[i];
        long set = -((xi >>> level) & 1); // all ones where x[i] has the level's bit
        long swap = (first ^ xi) & low & ~set; // else x[0] and x[i] swap their low bits
        x[i] = xi ^ swap;
        first ^= (set & low) | swap; // where it has it, x[0]'s low bits are reflected
      }
    }
    x[0] = first;
    for (int i = 1; i < dims; i++) {
      x[i] ^= x[i - 1];
    }
    long t = 0;
    long last = x[dims - 1];
    for (int level = bits - 1; level > 0; level--) {
      t ^= ((1L << level) - 1) & -((last >>> level) & 1);
    }
    for (int i = 0; i < dims; i++) {
      x[i] ^= t;
    }
    return interleave(x);
  }

  /** One partition's plan: its searches, its files, and the number of its first file. */
  private static final class Plan implements Serializable {
    private static final long serialVersionUID = 1L;
    final long offset;
    final Search[] searches;
    final Files files;

    Plan(DataInputStream in, byte[] kinds, int dims) throws IOException {
      offset = in.readLong();
      searches = new Search[in.readInt()];
      for (int s = 0; s < searches.length; s++) {
        int input = in.readInt();
        searches[s] = new Search(in, input, kinds[input]);
      }
      files = in.readByte() == 0 ? new Cells(in) : new Ranges(in, dims);
    }
  }

  /**
   * A column's buckets: 0 for NULL, else 1 + the number of boundaries <= the
   * value, mapped through {@code ids} (rank buckets) or kept as it is (cuts).
   *
   * Numbers are searched as signed order words (a double's IEEE bits with the
   * magnitude flipped when negative); byte strings by their first 8 bytes as
   * such a word, then byte by byte among the boundaries sharing those 8 bytes.
   */
  private static final class Search implements Serializable {
    private static final long serialVersionUID = 1L;
    final int input;
    final byte kind;
    final long[] words; // numbers and byte strings: each boundary's order word
    final long[] nextWords; // byte strings: bytes 8 to 15 as an order word
    final byte[][] byteValues;
    final BigDecimal[] decimals;
    final long[] ids;

    Search(DataInputStream in, int input, byte kind) throws IOException {
      this.input = input;
      this.kind = kind;
      int count = in.readInt();
      long[] wordValues = new long[count];
      long[] nextValues = kind == BYTES ? new long[count] : null;
      // Allocated for their kind even when empty: a column whose sample holds one value has
      // no boundary, and every value is then in bucket 1.
      byte[][] bytes = kind == BYTES ? new byte[count][] : null;
      BigDecimal[] decimalValues = kind == DECIMAL ? new BigDecimal[count] : null;
      for (int i = 0; i < count; i++) {
        switch (kind) {
          case LONG:
          case LOCAL_DATETIME:
            wordValues[i] = in.readLong();
            break;
          case DOUBLE:
            wordValues[i] = doubleWord(in.readDouble());
            break;
          case BYTES:
            bytes[i] = new byte[in.readInt()];
            in.readFully(bytes[i]);
            wordValues[i] = word(bytes[i], 0);
            nextValues[i] = word(bytes[i], 8);
            break;
          case DECIMAL:
            decimalValues[i] = new BigDecimal(readText(in));
            break;
          default:
            throw new IllegalArgumentException("zorder: unknown value kind " + kind);
        }
      }
      words = wordValues;
      nextWords = nextValues;
      byteValues = bytes;
      decimals = decimalValues;
      int idCount = in.readInt();
      ids = idCount == 0 ? null : readLongs(in, idCount);
    }

    long id(Object value) {
      int bucket = value == null ? 0 : 1 + atOrBelow(value);
      return ids == null ? bucket : ids[bucket];
    }

    /** How many boundaries are <= value. */
    private int atOrBelow(Object value) {
      switch (kind) {
        case LONG:
          return upperBound(words, 0, words.length, ((Long) value).longValue());
        case LOCAL_DATETIME:
          return upperBound(words, 0, words.length, micros((LocalDateTime) value));
        case DOUBLE:
          return upperBound(words, 0, words.length, doubleWord(((Double) value).doubleValue()));
        case BYTES:
          return bytesAtOrBelow((byte[]) value);
        default:
          BigDecimal x = (BigDecimal) value;
          int from = 0;
          int to = decimals.length;
          while (from < to) {
            int mid = (from + to) >>> 1;
            if (decimals[mid].compareTo(x) <= 0) from = mid + 1; else to = mid;
          }
          return from;
      }
    }

    /** How many byte-string boundaries are <= value (unsigned bytes, as Spark compares). */
    private int bytesAtOrBelow(byte[] value) {
      long first = word(value, 0);
      // Boundaries whose first 8 bytes are at most the value's; where none shares them
      // (the common case), that is the count. Else those sharing them are searched.
      int high = upperBound(words, 0, words.length, first);
      if (high == 0 || words[high - 1] != first) {
        return high;
      }
      int low = first == Long.MIN_VALUE ? 0 : upperBound(words, 0, high, first - 1);
      long second = word(value, 8);
      while (low < high) {
        int mid = (low + high) >>> 1;
        if (tiedAtOrBelow(mid, second, value)) low = mid + 1; else high = mid;
      }
      return low;
    }

    /** Whether boundary {@code i}, whose first 8 bytes are the value's, is <= the value. */
    private boolean tiedAtOrBelow(int i, long second, byte[] value) {
      if (nextWords[i] != second) {
        return nextWords[i] < second;
      }
      return Arrays.compareUnsigned(byteValues[i], value) <= 0; // 16 bytes alike
    }

    /** Signed-comparable bits of a double: -0.0 is 0.0, every NaN one NaN above +inf. */
    static long doubleWord(double value) {
      long bits = Double.doubleToLongBits(value == 0.0 ? 0.0 : value);
      return bits ^ ((bits >> 63) & Long.MAX_VALUE);
    }

    /**
     * Bytes {@code from} to {@code from + 7}, zero-padded, big-endian, as a
     * signed-comparable word: where two strings' words differ, so do the strings,
     * the same way.
     */
    static long word(byte[] value, int from) {
      if (value.length >= from + 8) {
        return (long) BIG_ENDIAN_LONG.get(value, from) ^ Long.MIN_VALUE;
      }
      long word = 0;
      for (int i = from; i < from + 8; i++) {
        word = (word << 8) | (i < value.length ? (value[i] & 0xFF) : 0);
      }
      return word ^ Long.MIN_VALUE;
    }

    private static long micros(LocalDateTime value) {
      return Math.addExact(
          Math.multiplyExact(value.toEpochSecond(ZoneOffset.UTC), 1_000_000L),
          value.getNano() / 1_000L);
    }
  }

  /** How many of {@code sorted[from:to]} are <= value, plus {@code from} (branch-free). */
  static int upperBound(long[] sorted, int from, int to, long value) {
    int base = from;
    int length = to - from;
    if (length <= 0) {
      return from;
    }
    while (length > 1) {
      int half = length >>> 1;
      base = sorted[base + half] <= value ? base + half : base;
      length -= half;
    }
    return base + (sorted[base] <= value ? 1 : 0);
  }

  /** Which file a row goes to, from its ids and its key along the curve. */
  private interface Files extends Serializable {
    long cell(long[] ids, long key);
  }

  /** zorder.curves.cells.FileCells: a tree of cuts over ids whose leaves are cells. */
  private static final class Cells implements Files {
    private static final long serialVersionUID = 1L;
    private static final int MAX_TABLE = 1 << 20; // entries: 4 MiB a task's copy
    final int[] column;
    final int[] cutStart;
    final int[] firstChild;
    final int[] cell;
    final long[] cuts;
    // The walk as a table (node, id) -> child, when it is small: one lookup a level.
    private transient Walk walk;
    private transient boolean searched; // the table would be too big: search each node

    /** next[offsets[node] + min(id, spans[node])] is the child of node for id. */
    private static final class Walk {
      final int[] next;
      final int[] offsets;
      final long[] spans;

      Walk(int[] next, int[] offsets, long[] spans) {
        this.next = next;
        this.offsets = offsets;
        this.spans = spans;
      }
    }

    Cells(DataInputStream in) throws IOException {
      int nodes = in.readInt();
      column = readInts(in, nodes);
      cutStart = readInts(in, nodes + 1);
      firstChild = readInts(in, nodes);
      cell = readInts(in, nodes);
      cuts = readLongs(in, in.readInt());
    }

    private int child(int node, long id) {
      int start = cutStart[node];
      return firstChild[node] + upperBound(cuts, start, cutStart[node + 1], id) - start;
    }

    private Walk tabulate() {
      long total = 0;
      long[] spans = new long[column.length];
      for (int node = 0; node < column.length; node++) {
        spans[node] = column[node] < 0 ? 0 : cuts[cutStart[node + 1] - 1];
        total += spans[node] + 1;
      }
      if (total > MAX_TABLE) {
        return null;
      }
      int[] next = new int[(int) total];
      int[] offsets = new int[column.length];
      int at = 0;
      for (int node = 0; node < column.length; node++) {
        offsets[node] = at;
        for (long id = 0; id <= spans[node]; id++) {
          next[at++] = column[node] < 0 ? node : child(node, id);
        }
      }
      return new Walk(next, offsets, spans);
    }

    @Override
    public long cell(long[] ids, long key) {
      Walk table = walk;
      if (table == null && !searched) {
        table = tabulate();
        walk = table;
        searched = table == null;
      }
      int node = 0;
      if (table != null) {
        while (column[node] >= 0) {
          long id = Math.min(ids[column[node]], table.spans[node]);
          node = table.next[table.offsets[node] + (int) id];
        }
      } else {
        while (column[node] >= 0) {
          node = child(node, ids[column[node]]);
        }
      }
      return cell[node];
    }
  }

  /**
   * zorder.curves.cells.KeyRanges over rank keys: consecutive ranges of the key.
   * Rank keys are below 2**62, so signed comparisons order them.
   */
  private static final class Ranges implements Files {
    private static final long serialVersionUID = 1L;
    final long[] bounds;
    final long[] asideBounds;
    final long[] setAside; // per column: the id from which a row is set aside, or -1

    Ranges(DataInputStream in, int dims) throws IOException {
      bounds = readLongs(in, in.readInt());
      boolean aside = in.readByte() == 1;
      long[] asideValues = readLongs(in, in.readInt());
      asideBounds = aside ? asideValues : null;
      setAside = readLongs(in, dims);
    }

    @Override
    public long cell(long[] ids, long key) {
      if (asideBounds != null) {
        for (int c = 0; c < setAside.length; c++) {
          if (setAside[c] >= 0 && ids[c] >= setAside[c]) {
            return bounds.length + 1 + upperBound(asideBounds, 0, asideBounds.length, key);
          }
        }
      }
      return upperBound(bounds, 0, bounds.length, key);
    }
  }

  private static String readText(DataInputStream in) throws IOException {
    byte[] data = new byte[in.readInt()];
    in.readFully(data);
    return new String(data, StandardCharsets.UTF_8);
  }

  private static int[] readInts(DataInputStream in, int count) throws IOException {
    int[] out = new int[count];
    for (int i = 0; i < count; i++) {
      out[i] = in.readInt();
    }
    return out;
  }

  private static long[] readLongs(DataInputStream in, int count) throws IOException {
    long[] out = new long[count];
    for (int i = 0; i < count; i++) {
      out[i] = in.readLong();
    }
    return out;
  }
}
