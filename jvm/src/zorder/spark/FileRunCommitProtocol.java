/*
 * Spark's default commit protocol, except that a task may write several files of a
 * zorder run without hidden directories.
 *
 * A clustering run gives each row the number of the file it belongs in. A task
 * holds a contiguous run of files, its rows sorted by (partition, file, key), and
 * the write is partitioned by the partition columns and then by the file number
 * column, whose name the write passes as the option "zorder.fileColumn". Spark's
 * writer starts a new file whenever that column changes, as it does for any
 * partition column; this class then takes the file number's directory
 * ("<column>=17") out of the path and names the file after it instead:
 * part-00017-<job uuid>.c000.snappy.parquet in the partition's own directory, the
 * name Spark gives the file of task 17 when every file has a task of its own.
 *
 * Writes without the option behave exactly as with the default protocol. Built by
 * scripts/build_jar.py into src/zorder/spark/zorder-spark.jar.
 */
package zorder.spark;

import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.internal.io.FileNameSpec;
import org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol;
import scala.Option;

public class FileRunCommitProtocol extends SQLHadoopMapReduceCommitProtocol {
  /** The write option naming the file number column (the last partition column). */
  public static final String FILE_COLUMN = "zorder.fileColumn";

  public FileRunCommitProtocol(String jobId, String path, boolean dynamicPartitionOverwrite) {
    super(jobId, path, dynamicPartitionOverwrite);
  }

  @Override
  public String newTaskTempFile(TaskAttemptContext context, Option<String> dir, FileNameSpec spec) {
    String column = context.getConfiguration().get(FILE_COLUMN);
    if (column == null || dir.isEmpty()) {
      return super.newTaskTempFile(context, dir, spec);
    }
    String directory = dir.get();
    int slash = directory.lastIndexOf('/');
    String last = directory.substring(slash + 1);
    String marker = column + "=";
    if (!last.startsWith(marker)) {
      throw new IllegalStateException(
          "zorder: the file number column " + column + " is not the last directory of " + directory);
    }
    int number = Integer.parseInt(last.substring(marker.length()));
    Option<String> parent =
        slash < 0 ? Option.<String>empty() : Option.apply(directory.substring(0, slash));
    String path = super.newTaskTempFile(context, parent, spec);
    // The default name is <prefix>part-<task>-<job uuid><suffix>: the task becomes the file.
    int nameStart = path.lastIndexOf('/') + 1;
    String name = path.substring(nameStart);
    String task = String.format("part-%05d-", context.getTaskAttemptID().getTaskID().getId());
    if (!name.startsWith(spec.prefix() + task)) {
      throw new IllegalStateException("zorder: unexpected file name from Spark: " + name);
    }
    return path.substring(0, nameStart)
        + spec.prefix()
        + String.format("part-%05d-", number)
        + name.substring(spec.prefix().length() + task.length());
  }
}
