import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.streaming.checkpointing.HDFSMetadataLog;

/**
 * Evidence for docs/dev/soak.md, "a restart before the first commit": what an interrupt (as `query.stop()` sends the
 * query's thread) leaves behind when it lands while Spark writes batch 0 of a new metadata log on the local file
 * system. Each try writes batch 0 of a fresh log in a thread and interrupts it after a random delay; the tally says
 * whether the batch was written, the exception and where it came from, and the temporary files left.
 *
 *   J=$(.venv/bin/python -c 'import pyspark, os; print(os.path.dirname(pyspark.__file__))')/jars
 *   javac -d /tmp/evidence -cp "$J/*" soak/evidence/InterruptedOffsetLogWrite.java
 *   java -cp "/tmp/evidence:$J/*" InterruptedOffsetLogWrite 300 /tmp/evidence/logs 20000   # tries, folder, max µs
 *
 * Seen with PySpark 4.3.0 (Hadoop 3.5.0, no native library), twice: 195 and 196 of 300 tries ended in
 * InterruptedIOException in FileContextBasedCheckpointFileManager.createTempFile (Hadoop's Shell running chmod),
 * each leaving a 0-byte .0.<uuid>.tmp; the others wrote the batch and left nothing.
 */
public class InterruptedOffsetLogWrite {
  public static void main(String[] args) throws Exception {
    int tries = Integer.parseInt(args[0]);
    File root = new File(args[1]);
    long maxMicros = Long.parseLong(args[2]);
    SparkSession spark = SparkSession.builder().master("local[1]").config("spark.ui.enabled", "false").getOrCreate();
    Random random = new Random(1);
    Map<String, Integer> tally = new TreeMap<>();
    for (int i = 0; i < tries; i++) {
      File dir = new File(root, "log-" + i);
      HDFSMetadataLog<String> log =
          new HDFSMetadataLog<>(spark, dir.getPath(), false, scala.reflect.ClassTag$.MODULE$.apply(String.class));
      String[] failure = {"no error"};
      Thread writer = new Thread(() -> {
        try {
          log.add(0L, "batch-zero");
        } catch (Throwable e) {
          failure[0] = e.getClass().getSimpleName() + " in " + origin(e);
        }
      });
      writer.start();
      long until = System.nanoTime() + (long) (random.nextDouble() * maxMicros * 1000);
      while (System.nanoTime() < until) {
        Thread.onSpinWait();
      }
      writer.interrupt();
      writer.join();
      List<String> left = new ArrayList<>();
      String[] names = dir.list();
      if (names != null) {
        for (String name : names) {
          if (name.endsWith(".tmp")) left.add(new File(dir, name).length() == 0 ? "0 bytes" : "non-empty");
        }
      }
      String key = (new File(dir, "0").exists() ? "written" : "not written") + "; " + failure[0] + "; tmp left: "
          + (left.isEmpty() ? "none" : left);
      tally.merge(key, 1, Integer::sum);
    }
    tally.forEach((k, v) -> System.out.println(v + "\t" + k));
    spark.stop();
  }

  /** The first frame of Spark's checkpoint code in the exception's stack. */
  private static String origin(Throwable e) {
    for (StackTraceElement frame : e.getStackTrace()) {
      if (frame.getClassName().contains("CheckpointFileManager") || frame.getClassName().contains("HDFSMetadataLog")) {
        return frame.getClassName().replaceAll(".*\\.", "") + "." + frame.getMethodName();
      }
    }
    return "?";
  }
}
