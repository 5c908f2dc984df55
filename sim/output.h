/*
 * A run's files in --out: flows.csv (one line per flow), rpc.csv (one line
 * per request) and run.json (configuration, topology, counters, cost).
 * Statistics over them are the Python side's job (sim/pandasim/).
 */
#ifndef PANDA_SIM_OUTPUT_H
#define PANDA_SIM_OUTPUT_H

#include "records.h"

#include <cstdint>
#include <sstream>
#include <string>

namespace pandasim
{

/* A small streaming JSON writer: objects, arrays, scalars, raw fragments. */
class JsonWriter
{
  public:
    JsonWriter& Begin(const char* key = nullptr);      /* { */
    JsonWriter& End();                                 /* } */
    JsonWriter& BeginArray(const char* key = nullptr); /* [ */
    JsonWriter& EndArray();                            /* ] */
    JsonWriter& Str(const char* key, const std::string& v);
    JsonWriter& Num(const char* key, double v);
    JsonWriter& Int(const char* key, int64_t v);
    JsonWriter& UInt(const char* key, uint64_t v);
    JsonWriter& Bool(const char* key, bool v);
    JsonWriter& Null(const char* key);
    JsonWriter& Raw(const char* key, const std::string& json);
    std::string Text() const
    {
        return m_os.str() + "\n";
    }

  private:
    void Key(const char* key);
    static std::string Quote(const std::string& s);
    std::ostringstream m_os;
    bool m_first = true;
    int m_depth = 0;
};

/* Writes flows.csv and rpc.csv into 'dir'; throws std::runtime_error. */
void WriteRecords(const std::string& dir, const RunRecords& rec);
/* Writes 'text' to dir/name; throws std::runtime_error. */
void WriteFile(const std::string& dir, const std::string& name, const std::string& text);
/* This process's peak resident memory, KB (for run.json). */
long PeakRssKb();

} // namespace pandasim

#endif
