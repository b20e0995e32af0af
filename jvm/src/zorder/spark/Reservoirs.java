/*
 * One pass over a DataFrame that keeps, in each of its partitions, a uniform
 * reservoir of rows together with the partition's row count: what
 * zorder.spark.reservoirs needs to draw a uniform sample of rows it has not
 * counted, in one job instead of a count and a sample (Spark's RangePartitioner
 * sketches its range boundaries the same way).
 *
 * Each partition runs reservoir sampling (Vitter's algorithm R) with a
 * generator seeded by the seed and the partition's index, so the same input
 * partitions give the same reservoirs. Only kept rows are copied. Each kept row
 * leaves with two columns appended: the partition's index and its row count; a
 * partition of no rows sends nothing.
 */
package zorder.spark;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.Function2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

public final class Reservoirs {
  private Reservoirs() {}

  /** The number of partitions a pass over {@code rows} runs in. */
  public static int partitions(Dataset<Row> rows) {
    return classic(rows).queryExecution().toRdd().getNumPartitions();
  }

  /**
   * Each partition's reservoir of at most {@code size} rows of {@code rows}, each row with the
   * columns {@code partitionColumn} (int) and {@code countColumn} (long) appended. Lazy: the pass
   * runs when the result is collected.
   */
  public static Dataset<Row> sketch(
      Dataset<Row> rows, int size, long seed, String partitionColumn, String countColumn) {
    if (size < 1) {
      throw new IllegalArgumentException("a reservoir holds at least one row, got " + size);
    }
    org.apache.spark.sql.classic.Dataset<Row> input = classic(rows);
    StructType schema =
        input
            .schema()
            .add(partitionColumn, DataTypes.IntegerType, false)
            .add(countColumn, DataTypes.LongType, false);
    JavaRDD<InternalRow> kept =
        input.queryExecution().toRdd().toJavaRDD().mapPartitionsWithIndex(sampler(size, seed), false);
    return input.sparkSession().internalCreateDataFrame(kept.rdd(), schema, false);
  }

  private static Function2<Integer, Iterator<InternalRow>, Iterator<InternalRow>> sampler(
      int size, long seed) {
    return (index, rows) -> {
      SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + index);
      List<InternalRow> reservoir = new ArrayList<>(Math.min(size, 1024));
      long count = 0;
      while (rows.hasNext()) {
        InternalRow row = rows.next(); // a buffer the scan reuses: copied if kept
        if (count < size) {
          reservoir.add(row.copy());
        } else {
          long slot = random.nextLong(count + 1);
          if (slot < size) {
            reservoir.set((int) slot, row.copy());
          }
        }
        count++;
      }
      if (count == 0) {
        return Collections.emptyIterator();
      }
      InternalRow tail = new GenericInternalRow(new Object[] {index, count});
      List<InternalRow> out = new ArrayList<>(reservoir.size());
      for (InternalRow row : reservoir) {
        out.add(new JoinedRow(row, tail));
      }
      return out.iterator();
    };
  }

  private static org.apache.spark.sql.classic.Dataset<Row> classic(Dataset<Row> rows) {
    if (!(rows instanceof org.apache.spark.sql.classic.Dataset)) {
      throw new IllegalArgumentException("reservoirs need a classic Spark session's Dataset");
    }
    return (org.apache.spark.sql.classic.Dataset<Row>) rows;
  }
}
